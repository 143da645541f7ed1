/**
 * The guides' shown outputs are what the commands print today (`npm run docs:guides` rewrites
 * them; this test fails when one drifted). Only the marked, simulated blocks are run; the
 * real-clock steps of the observe guide are not, as that guide says.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guideBlocks, MARKER, renderBlock, shellOf } from '../scripts/docs-guides.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';

describe('the guides', () => {
  it('find the marked blocks, their commands (with continuations) and the output shown under each', () => {
    const md = [
      'text',
      MARKER,
      '```',
      '$ echo a \\',
      '    b',
      'a b',
      '$ echo c',
      'c',
      '```',
      '```',
      '$ not marked',
      '```',
    ].join('\n');
    const [b, ...rest] = guideBlocks(md);
    expect(rest).toEqual([]);
    expect(b!.commands).toEqual([
      { shown: '$ echo a \\\n    b', output: ['a b'] },
      { shown: '$ echo c', output: ['c'] },
    ]);
    expect(shellOf('$ npx sluice run x.yaml \\\n    --json')).toBe(
      'node bin/sluice.js run x.yaml      --json',
    );
  });

  it('notice a shown output that is not what the command prints', () => {
    const md = [MARKER, '```', '$ echo printed', 'shown', '```'].join('\n');
    const [b] = guideBlocks(md);
    expect(renderBlock(b!, REPO_ROOT)).toEqual(['$ echo printed', 'printed']);
  });

  it('show what each marked command prints today', () => {
    const docs = join(REPO_ROOT, 'docs');
    let checked = 0;
    for (const name of readdirSync(docs).filter((f) => f.endsWith('.md'))) {
      const lines = readFileSync(join(docs, name), 'utf8').split('\n');
      for (const b of guideBlocks(lines.join('\n'))) {
        expect(
          renderBlock(b, REPO_ROOT).join('\n'),
          `docs/${name}:${b.first} (run npm run docs:guides)`,
        ).toBe(lines.slice(b.first, b.end).join('\n'));
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
