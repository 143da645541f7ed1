/**
 * Chart (c): TTFT and end-to-end latency, p50 and p95, over time; one row
 * per metric with its own y scale (e2e is often ten times TTFT).
 */
import type { SecondRow } from '../../sim/run/records.js';
import type { VegaLiteSpec } from '../types.js';
import { bucketRows, maxPresent, meanPresent } from './buckets.js';
import { bucketSize, CHART_WIDTH, chartConfig, round, VL_SCHEMA, WARMUP_FILL } from './theme.js';

/** Options of the latency chart. */
export interface LatencyChartOptions {
  /** Most points per series before seconds are bucketed (default 360). */
  maxPoints?: number;
  width?: number;
  /** Seconds of warm-up to shade (none when 0 or absent). */
  warmupS?: number;
}

const METRICS = ['time to first token', 'end to end'];

/**
 * Builds the chart. Per interval: the mean of the per-second p50s and the
 * largest per-second p95 (seconds with no completions leave a gap).
 */
export function latencyChart(rows: readonly SecondRow[], opts: LatencyChartOptions = {}): VegaLiteSpec {
  const values: { t_s: number; metric: string; percentile: string; ms: number | null }[] = [];
  const r6 = (v: number | null): number | null => (v === null ? null : round(v));
  for (const b of bucketRows(rows, bucketSize(rows.length, opts.maxPoints ?? 360))) {
    values.push(
      {
        t_s: b.t_s,
        metric: 'time to first token',
        percentile: 'p50',
        ms: r6(meanPresent(b.rows, (r) => r.ttft_p50_ms)),
      },
      {
        t_s: b.t_s,
        metric: 'time to first token',
        percentile: 'p95',
        ms: r6(maxPresent(b.rows, (r) => r.ttft_p95_ms)),
      },
      {
        t_s: b.t_s,
        metric: 'end to end',
        percentile: 'p50',
        ms: r6(meanPresent(b.rows, (r) => r.e2e_p50_ms)),
      },
      {
        t_s: b.t_s,
        metric: 'end to end',
        percentile: 'p95',
        ms: r6(maxPresent(b.rows, (r) => r.e2e_p95_ms)),
      },
    );
  }
  const spec = {
    $schema: VL_SCHEMA,
    title: { text: 'Latency over time', subtitle: 'per second: p50 and p95 of requests finishing in it' },
    config: chartConfig(),
    data: { values },
    facet: {
      row: {
        field: 'metric',
        type: 'nominal',
        title: null,
        sort: METRICS,
        header: { labelAngle: 0, labelAlign: 'left', labelAnchor: 'start', labelOrient: 'top' },
      },
    },
    spacing: 14,
    resolve: { scale: { y: 'independent' } },
    spec: latencyView(opts),
  };
  return spec as unknown as VegaLiteSpec;
}

/** The lines of one facet row, over a warm-up band (one per row, drawn from a datum) when there is one. */
function latencyView(opts: LatencyChartOptions): Record<string, unknown> {
  const width = opts.width ?? CHART_WIDTH;
  const lines = {
    mark: { type: 'line', strokeWidth: 1.6 },
    encoding: {
      x: { field: 't_s', type: 'quantitative', title: 'time (s)' },
      y: { field: 'ms', type: 'quantitative', title: 'ms' },
      color: {
        field: 'percentile',
        type: 'nominal',
        title: 'percentile',
        scale: { domain: ['p50', 'p95'], range: ['#1f77b4', '#d62728'] },
      },
      tooltip: [
        { field: 't_s', type: 'quantitative', title: 't (s)' },
        { field: 'metric', type: 'nominal' },
        { field: 'percentile', type: 'nominal' },
        { field: 'ms', type: 'quantitative', format: ',.0f' },
      ],
    },
  };
  const w = opts.warmupS ?? 0;
  if (w <= 0) return { width, height: 130, ...lines };
  const band = {
    transform: [{ aggregate: [{ op: 'count', as: 'n' }], groupby: ['metric'] }],
    mark: { type: 'rect', color: WARMUP_FILL, opacity: 0.08 },
    encoding: {
      x: { datum: 0, type: 'quantitative' },
      x2: { datum: w },
    },
  };
  return { width, height: 130, layer: [band, lines] };
}
