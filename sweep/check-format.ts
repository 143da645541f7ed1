/**
 * The text output of a check: a table of every figure that moved (tolerated,
 * improved or regressed) and one verdict line per scenario.
 */
import type { CheckResult, RunDiff } from './check.js';
import { show, table } from './format.js';

/** A change as text: `+1.5 (+4.8%)`. */
export function changeText(d: RunDiff): string {
  if (d.delta === null) return d.current === null ? 'no value now' : 'had no value';
  const sign = d.delta > 0 ? '+' : '';
  const pct = d.baseline ? ` (${sign}${((d.delta / Math.abs(d.baseline)) * 100).toFixed(1)}%)` : '';
  return `${sign}${show(d.delta)}${pct}`;
}

/** One moved figure on one line, for JUnit and logs. */
export function diffLine(d: RunDiff): string {
  return `${d.metric} seed ${d.seed}: ${show(d.baseline ?? undefined)} -> ${show(d.current ?? undefined)} ${changeText(d)}, allowed ±${show(d.allowed)}: ${d.verdict}`;
}

const VERDICT_TEXT = {
  same: 'same',
  within: 'within tolerance',
  improved: 'improved',
  regressed: 'REGRESSED',
};

/** The whole text output of a check. */
export function checkText(result: CheckResult): string {
  const out: string[] = [];
  const rows = result.scenarios.flatMap((s) =>
    s.moved.map((d) => [
      s.name,
      String(d.seed),
      d.metric,
      show(d.baseline ?? undefined),
      show(d.current ?? undefined),
      changeText(d),
      `±${show(d.allowed)}`,
      VERDICT_TEXT[d.verdict],
    ]),
  );
  if (rows.length > 0) {
    out.push(
      'What moved:',
      table(['scenario', 'seed', 'metric', 'baseline', 'now', 'change', 'allowed', 'verdict'], rows),
      '',
    );
  } else out.push('Nothing moved: every figure equals the baseline.', '');
  const verdicts = result.scenarios.map((s) => [
    s.name,
    s.status === 'missing'
      ? `FAIL  ${s.message ?? ''}`
      : s.status === 'fail'
        ? `FAIL  regressed: ${[...new Set(s.regressions.map((d) => d.metric))].join(', ')}`
        : s.moved.length > 0
          ? 'ok    (moved within tolerance or improved; consider --update-baseline)'
          : 'ok',
  ]);
  // No head line of its own: the first verdict stands in its place.
  const [first, ...rest] = verdicts;
  if (first) out.push(table(first, rest));
  const failed = result.scenarios.filter((s) => s.status !== 'pass').length;
  out.push(
    '',
    `${result.scenarios.length} scenario${result.scenarios.length === 1 ? '' : 's'}: ${result.scenarios.length - failed} passed, ${failed} failed`,
  );
  return `${out.join('\n')}\n`;
}
