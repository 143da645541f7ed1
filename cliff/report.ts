/**
 * Writes a cliff test's outputs: `cliff.json` (so `sluice report DIR` re-renders), the report in
 * `DIR/report`, and `steps.json` with every step's details. The report's cliff chart, findings and
 * table carry every line (the gate's modes and HAProxy); the extra sections are a table of every
 * step's details and HAProxy's generated configuration.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliffChart, MODE_LABELS } from '../reports/charts/cliff.js';
import { writeCliffReport } from '../reports/cliff-report.js';
import { saveCliff } from '../reports/files.js';
import type { ChartSection, ReportFiles, Section, VegaLiteSpec } from '../reports/types.js';
import { type CliffResult, type CliffStep, toPoint } from './cliff.js';
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

/**
 * The cliff chart of the valid steps with every invalid step drawn over it as a red cross at its
 * goodput (a tooltip says why), or undefined when every step is valid. The report's main chart
 * leaves invalid steps out; this one shows where they were and that nothing is drawn from them.
 */
export function invalidStepsChart(steps: readonly CliffStep[]): ChartSection | undefined {
  const invalid = steps.filter((s) => !s.valid);
  if (invalid.length === 0) return undefined;
  const base = cliffChart(steps.filter((s) => s.valid).map(toPoint)) as VegaLiteSpec & { layer: unknown[] };
  const cross = {
    data: {
      values: invalid.map((s) => ({
        offered_rps: s.offered_rps,
        rps: Math.round(s.goodput_rps * 100) / 100,
        line: MODE_LABELS[s.line],
        why: invalidReason(s),
      })),
    },
    mark: { type: 'point', shape: 'cross', color: '#d62728', size: 140, filled: true },
    encoding: {
      x: { field: 'offered_rps', type: 'quantitative' },
      y: { field: 'rps', type: 'quantitative' },
      tooltip: [
        { field: 'line', type: 'nominal' },
        { field: 'offered_rps', type: 'quantitative', title: 'offered' },
        { field: 'rps', type: 'quantitative', title: 'goodput (not judged)' },
        { field: 'why', type: 'nominal', title: 'INVALID' },
      ],
    },
  };
  return {
    kind: 'chart',
    name: 'cliff-invalid-steps',
    title: 'Invalid steps',
    caption:
      'The chart above with the invalid steps drawn as red crosses at the goodput they measured: the driver fell behind its schedule there, so the figure is the harness, not the gate. The findings draw nothing from them.',
    spec: { ...base, layer: [...base.layer, cross] } as VegaLiteSpec,
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
  const extra: Section[] = [];
  const marked = invalidStepsChart(result.steps);
  if (marked !== undefined) extra.push(marked);
  extra.push(stepsTable(result.steps));
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
