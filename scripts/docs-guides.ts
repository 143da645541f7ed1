/**
 * `npm run docs:guides [-- --check]`: the outputs the guides show are what the commands print.
 *
 * A code block in `docs/*.md` preceded by the line `<!-- docs:guides -->` holds shell commands
 * (lines starting `$ `, continued with a trailing `\`) each followed by what it prints. This
 * script runs every such block from the repository root, in a shell, each command's stdout
 * shown after it, and writes the output back into the guide (`--check`: writes nothing, lists
 * the blocks whose shown output differs and exits 1). Only simulated commands belong in marked
 * blocks (`sluice run`, `size`, `check`, `validate`, `observe` on a file): they are deterministic.
 * Real-clock steps (a proxy, a load run, curl) stay unmarked and are said so in their guide.
 * `npx sluice` runs as `node bin/sluice.js`; the repository's absolute path is printed relative.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The marker line before a block the script keeps true. */
export const MARKER = '<!-- docs:guides -->';

/** One command of a block and the output shown under it. */
export interface GuideCommand {
  /** The command as shown (continuation lines joined with their backslashes). */
  shown: string;
  /** The lines shown after it. */
  output: string[];
}

/** A marked block: where its body lies in the file's lines, and its commands. */
export interface GuideBlock {
  /** Index of the first body line (after the opening fence). */
  first: number;
  /** Index of the closing fence. */
  end: number;
  commands: GuideCommand[];
}

/** The marked blocks of a Markdown text. */
export function guideBlocks(markdown: string): GuideBlock[] {
  const lines = markdown.split('\n');
  const out: GuideBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== MARKER) continue;
    const open = i + 1;
    if (!lines[open]?.startsWith('```'))
      throw new Error(`line ${i + 1}: ${MARKER} must stand right before a code block`);
    let end = open + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    if (end >= lines.length) throw new Error(`line ${open + 1}: the code block is never closed`);
    const commands: GuideCommand[] = [];
    for (let k = open + 1; k < end; k++) {
      const line = lines[k]!;
      if (line.startsWith('$ ')) {
        const parts = [line];
        while (parts.at(-1)!.endsWith('\\') && k + 1 < end) parts.push(lines[++k]!);
        commands.push({ shown: parts.join('\n'), output: [] });
      } else if (commands.length > 0) commands.at(-1)!.output.push(line);
      else throw new Error(`line ${k + 1}: a marked block must start with a "$ " command`);
    }
    out.push({ first: open + 1, end, commands });
    i = end;
  }
  return out;
}

/** The shell text of a shown command: `$ ` dropped, `npx sluice` as the repository's own bin. */
export function shellOf(shown: string): string {
  return shown
    .replace(/^\$ /, '')
    .replaceAll('\\\n', ' ')
    .replace(/(^|\s|;|&&)npx sluice /g, '$1node bin/sluice.js ');
}

/** Runs one command from `root`; its stdout, with `root` printed relative, as lines. */
export function runShown(shown: string, root: string): string[] {
  let stdout: string;
  try {
    stdout = execFileSync('bash', ['-c', shellOf(shown)], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    // A command that exits non-zero (a regression found, for instance) still prints its output.
    stdout = (err as { stdout?: string }).stdout ?? '';
  }
  const text = stdout.replaceAll(`${root}/`, '').replace(/\n$/, '');
  return text === '' ? [] : text.split('\n');
}

/** A block's body as it should read: each command, then what it prints now. */
export function renderBlock(block: GuideBlock, root: string): string[] {
  return block.commands.flatMap((c) => [...c.shown.split('\n'), ...runShown(c.shown, root)]);
}

/** The repository root (this file is in scripts/). */
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');

function main(): void {
  const check = process.argv.includes('--check');
  const drifted: string[] = [];
  const docs = join(ROOT, 'docs');
  for (const name of readdirSync(docs).filter((f) => f.endsWith('.md'))) {
    const path = join(docs, name);
    const text = readFileSync(path, 'utf8');
    const blocks = guideBlocks(text);
    if (blocks.length === 0) continue;
    const lines = text.split('\n');
    // From the last block up, so earlier indices stay valid while the body lengths change.
    for (const b of [...blocks].reverse()) {
      const now = renderBlock(b, ROOT);
      const shown = lines.slice(b.first, b.end);
      if (now.join('\n') !== shown.join('\n')) {
        drifted.push(`docs/${name}:${b.first}: ${b.commands[0]!.shown.split('\n')[0]}`);
        lines.splice(b.first, b.end - b.first, ...now);
      }
    }
    if (!check) writeFileSync(path, lines.join('\n'));
  }
  if (drifted.length === 0)
    process.stdout.write('docs:guides: every shown output is what the command prints\n');
  else
    process.stdout.write(
      `docs:guides: ${check ? 'drifted' : 'rewrote'} ${drifted.length} block(s):\n${drifted.map((d) => `  ${d}`).join('\n')}\n`,
    );
  if (check && drifted.length > 0) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
