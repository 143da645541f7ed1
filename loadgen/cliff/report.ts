/**
 * Writes a cliff test's outputs: `cliff.json` (so `sluice report DIR` re-renders), the report in
 * `DIR/report`, and `steps.json` with every step's details. The report's cliff chart, findings and
 * table carry every line (the gate's modes and HAProxy); the extra sections are a table of every
 * step's details and HAProxy's generated configuration.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODE_LABELS } from '../../reports/charts/cliff.js';
import { writeCliffReport } from '../../reports/cliff-report.js';
import { saveCliff } from '../../reports/files.js';
import type { ReportFiles, Section } from '../../reports/types.js';
import type { CliffResult, CliffStep } from './cliff.js';
import { invalidReason } from './validity.js';

const r2 = (v: number | null): number | string => (v === null ? '-' : Math.round(v * 100) / 100);

/** A table of every step (all lines), invalid ones marked with why. */
export function stepsTable(steps: readonly CliffStep[]): Section {
  return {
    kind: 'table',
    title: 'Every step',
    caption:
      'Engine time. Goodput share is good over offered logical requests: shed requests stay in the denominator. A step is INVALID when the driver fell behind its schedule (more than the lateness bound of its sends late by > 10 ms): it did not offer the load it is labelled with, so the chart, the findings and the table above leave it out.',
    columns: [
      'line',
      'offered rps',
      'goodput rps',
      'goodput share',
      'throughput rps',
      'shed rate',
      'TTFT p50 ms',
      'TTFT p95 ms',
      'sends',
      'late sends',
      'lag p99 ms',
      'valid',
    ],
    rows: steps.map((s) => [
      MODE_LABELS[s.line],
      s.offered_rps,
      r2(s.goodput_rps),
      r2(s.goodput_share),
      r2(s.throughput_rps),
      r2(s.shed_rate),
      r2(s.ttft_p50_ms),
      r2(s.ttft_p95_ms),
      s.sends,
      s.late_sends,
      r2(s.lag_p99_ms),
      s.valid ? 'yes' : `INVALID: ${invalidReason(s)}`,
    ]),
  };
}

/** The change from `sim` to `real` (null when either is missing, '-' in the table). */
const diff = (real: number | null, sim: number | null): number | string =>
  real === null || sim === null ? '-' : r2(real - sim);

/**
 * A table of each real step beside the simulated step of the same line and rate: goodput, shed
 * rate and TTFT p95, and the real figure minus the simulated one.
 */
export function comparisonTable(real: readonly CliffStep[], simulated: readonly CliffStep[]): Section {
  return {
    kind: 'table',
    title: 'Real against simulated',
    caption:
      'Each real step beside the same step run in the simulator (sluice cliff --simulate): the same requests, rate, step length and gate core, on the virtual clock against simulated engines. Δ is real minus simulated.',
    columns: [
      'line',
      'offered rps',
      'goodput real',
      'goodput sim',
      'Δ goodput',
      'shed real',
      'shed sim',
      'TTFT p95 real ms',
      'TTFT p95 sim ms',
      'Δ TTFT p95 ms',
    ],
    rows: real.flatMap((r) => {
      const s = simulated.find((x) => x.line === r.line && x.offered_rps === r.offered_rps);
      if (s === undefined) return [];
      return [
        [
          r.valid ? MODE_LABELS[r.line] : `${MODE_LABELS[r.line]} (INVALID)`,
          r.offered_rps,
          r2(r.goodput_rps),
          r2(s.goodput_rps),
          diff(r.goodput_rps, s.goodput_rps),
          r2(r.shed_rate),
          r2(s.shed_rate),
          r2(r.ttft_p95_ms),
          r2(s.ttft_p95_ms),
          diff(r.ttft_p95_ms, s.ttft_p95_ms),
        ],
      ];
    }),
  };
}

/**
 * Writes cliff.json, steps.json and the report into `dir` (report in `dir/report`). With
 * `simulated` (the same cliff run in the simulator), steps.json carries it too and the report
 * gets the {@link comparisonTable}.
 */
export async function writeCliffOutputs(
  dir: string,
  result: CliffResult,
  simulated?: CliffResult,
): Promise<ReportFiles> {
  const data = { scenario: result.scenario, points: result.points, notes: result.notes };
  saveCliff(dir, data);
  writeFileSync(
    join(dir, 'steps.json'),
    `${JSON.stringify(simulated === undefined ? result : { ...result, simulated }, null, 2)}\n`,
  );
  const extra: Section[] = [stepsTable(result.steps)];
  if (simulated !== undefined) extra.push(comparisonTable(result.steps, simulated.steps));
  if (result.haproxy) {
    extra.push({
      kind: 'code',
      title: `HAProxy configuration (${result.haproxy.version})`,
      language: 'text',
      text: result.haproxy.config,
    });
  }
  return writeCliffReport(join(dir, 'report'), data, { extraSections: extra });
}
