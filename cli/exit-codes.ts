/**
 * The exit-code convention every command states in its --help (and README "Exit codes"), and the
 * answer to an unknown command: the nearest command's name and exit 2, never the main help and 0.
 */
import type { Command } from 'commander';

/** What exit 1 (a finding) and exit 3 (invalid measurement) mean for a command, when it uses them. */
const MEANINGS: Record<string, { finding?: string; invalid?: string }> = {
  load: { invalid: 'the driver fell behind its schedule (more than --max-late-share of sends late)' },
  size: { finding: 'no point meets every SLO (a --shard run judges nothing: sluice merge does)' },
  merge: { finding: 'no point meets every SLO' },
  check: { finding: 'a figure regressed against the baseline, or the baseline lacks a scenario' },
  cliff: {
    invalid: 'a step is invalid: the driver fell behind (more than --max-late-share of its sends late)',
  },
  fidelity: {
    finding: 'a target missed',
    invalid: 'the driver fell behind, or the runs did not offer the same requests: targets not judged',
  },
};

/** The "Exit codes" paragraph of the main help: what every command means by each code. */
export const MAIN_EXIT_CODES = [
  '',
  'Exit codes (every command; its --help says which it uses):',
  '  0  ok',
  '  1  a finding: a regression, a missed target, no point meets the SLOs',
  '  2  bad input or usage (an unknown command, a missing or malformed option, a bad file)',
  '  3  the measurement is invalid: the harness could not keep up, so nothing is judged',
  '  4  internal error (a bug in Sluice)',
].join('\n');

/** The "Exit codes" paragraph of `name`'s --help. */
export function exitCodesHelp(name: string): string {
  const m = MEANINGS[name] ?? {};
  return [
    '',
    'Exit codes:',
    '  0  ok',
    `  1  a finding${m.finding ? `: ${m.finding}` : ' (not used by this command)'}`,
    '  2  bad input or usage',
    `  3  the measurement is invalid${m.invalid ? `: ${m.invalid}` : ' (not used by this command)'}`,
    '  4  internal error (a bug in Sluice)',
  ].join('\n');
}

/** Appends the exit codes to the help of `program` and every subcommand. */
export function addExitCodesHelp(program: Command): void {
  program.addHelpText('after', MAIN_EXIT_CODES);
  for (const sub of program.commands) sub.addHelpText('after', exitCodesHelp(sub.name()));
}

/** Optimal string alignment distance (edits, adjacent swaps counting one). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** The command name nearest to `word` (ties: the earlier command). */
export function nearestCommand(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const n of names) {
    const dist = editDistance(word, n);
    if (dist < bestD) {
      best = n;
      bestD = dist;
    }
  }
  return best;
}

/**
 * The error line for an unknown command in `args` (argv after the node and script), or undefined
 * when the command is known or none is given. `sluice calibrat --help` and `sluice help calibrat`
 * are unknown commands too: the help flag must not hide the typo.
 */
export function unknownCommandMessage(program: Command, args: readonly string[]): string | undefined {
  const operands = args.filter((a) => !a.startsWith('-'));
  const first = operands[0] === 'help' ? operands[1] : operands[0];
  if (first === undefined) return undefined;
  const names = program.commands.map((c) => c.name());
  const known = new Set(['help', ...program.commands.flatMap((c) => [c.name(), ...c.aliases()])]);
  if (known.has(first)) return undefined;
  const near = nearestCommand(first, names);
  return `sluice: unknown command '${first}'${near ? `; the nearest is '${near}' (sluice ${near} --help)` : ''}\ncommands: ${names.join(', ')}\n`;
}
