/**
 * Writes a cliff test's outputs: `cliff.json` (so `sluice report DIR` re-renders), the report in
 * `DIR/report`, and `steps.json` with every step's details. The report's cliff chart and table take
 * the gate modes only (`CliffMode` has no HAProxy line yet), so the HAProxy line comes as extra
 * sections: a chart of goodput per line including HAProxy, and a table of its steps.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartConfig, VL_SCHEMA } from '../../reports/charts/theme.js';
import { writeCliffReport } from '../../reports/cliff-report.js';
import { saveCliff } from '../../reports/files.js';
import type { ReportFiles, Section, VegaLiteSpec } from '../../reports/types.js';
import type { CliffResult, CliffStep } from './cliff.js';

const LINE_LABELS: Record<CliffStep['line'], string> = {
  off: 'gate off',
  observe: 'observe',
  enforce: 'enforce',
  haproxy: 'HAProxy 2.6',
};

const r2 = (v: number | null): number | string => (v === null ? '-' : Math.round(v * 100) / 100);

/** Goodput against offered load for every line, HAProxy included. */
export function allLinesChart(steps: readonly CliffStep[]): VegaLiteSpec {
  return {
    $schema: VL_SCHEMA,
    title: {
      text: 'Goodput against offered load, with HAProxy 2.6',
      subtitle: 'good, on-time completions/s',
    },
    config: chartConfig(),
    width: 640,
    height: 300,
    data: {
      values: steps.map((s) => ({
        line: LINE_LABELS[s.line],
        offered_rps: s.offered_rps,
        goodput_rps: s.goodput_rps,
        shed_rate: s.shed_rate,
      })),
    },
    mark: { type: 'line', point: true, strokeWidth: 2 },
    encoding: {
      x: { field: 'offered_rps', type: 'quantitative', title: 'offered load (requests/s)' },
      y: { field: 'goodput_rps', type: 'quantitative', title: 'goodput (requests/s)' },
      color: { field: 'line', type: 'nominal', title: 'line' },
      tooltip: [
        { field: 'line', type: 'nominal' },
        { field: 'offered_rps', type: 'quantitative' },
        { field: 'goodput_rps', type: 'quantitative', format: '.2f' },
        { field: 'shed_rate', type: 'quantitative', format: '.1%' },
      ],
    },
  } as VegaLiteSpec;
}

/** A table of every step (all lines). */
export function stepsTable(steps: readonly CliffStep[]): Section {
  return {
    kind: 'table',
    title: 'Every step',
    caption:
      'Engine time. Goodput share is good over offered logical requests: shed requests stay in the denominator.',
    columns: [
      'line',
      'offered rps',
      'goodput rps',
      'goodput share',
      'throughput rps',
      'shed rate',
      'TTFT p50 ms',
      'TTFT p95 ms',
      'late sends',
    ],
    rows: steps.map((s) => [
      LINE_LABELS[s.line],
      s.offered_rps,
      r2(s.goodput_rps),
      r2(s.goodput_share),
      r2(s.throughput_rps),
      r2(s.shed_rate),
      r2(s.ttft_p50_ms),
      r2(s.ttft_p95_ms),
      s.late_sends,
    ]),
  };
}

/** Writes cliff.json, steps.json and the report into `dir` (report in `dir/report`). */
export async function writeCliffOutputs(dir: string, result: CliffResult): Promise<ReportFiles> {
  const data = { scenario: result.scenario, points: result.points, notes: result.notes };
  saveCliff(dir, data);
  writeFileSync(join(dir, 'steps.json'), `${JSON.stringify(result, null, 2)}\n`);
  const extra: Section[] = [stepsTable(result.steps)];
  if (result.steps.some((s) => s.line === 'haproxy')) {
    extra.unshift({
      kind: 'chart',
      name: 'cliff-haproxy',
      title: 'With HAProxy 2.6',
      caption: 'The gate modes beside HAProxy 2.6 with its nearest equivalent configuration.',
      spec: allLinesChart(result.steps),
    });
  }
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
