/**
 * Goodput over time: good completions per second against the requests
 * offered per second (and all completions), the warm-up shaded. The gap
 * between offered and good is what the gate, the queue and the pool cost.
 */
import type { SecondRow } from '../../sim/run/records.js';
import type { VegaLiteSpec } from '../types.js';
import { bucketRows } from './buckets.js';
import { bucketSize, CHART_WIDTH, chartConfig, round, shadeWarmup, VL_SCHEMA } from './theme.js';

/** Options of the goodput chart. */
export interface GoodputChartOptions {
  /** Most points per series before seconds are bucketed (default 360). */
  maxPoints?: number;
  width?: number;
  /** Seconds of warm-up to shade (none when 0 or absent). */
  warmupS?: number;
}

/** The series, in legend order. */
export const GOODPUT_SERIES = ['offered', 'completed', 'good'] as const;

/** Builds the chart: per interval, the mean rate per second of each series. */
export function goodputChart(rows: readonly SecondRow[], opts: GoodputChartOptions = {}): VegaLiteSpec {
  const values: { t_s: number; series: string; per_s: number }[] = [];
  for (const b of bucketRows(rows, bucketSize(rows.length, opts.maxPoints ?? 360))) {
    const rate = (pick: (r: SecondRow) => number): number =>
      round(b.rows.reduce((s, r) => s + pick(r), 0) / b.seconds);
    values.push(
      { t_s: b.t_s, series: 'offered', per_s: rate((r) => r.arrivals) },
      { t_s: b.t_s, series: 'completed', per_s: rate((r) => r.completed) },
      { t_s: b.t_s, series: 'good', per_s: rate((r) => r.good) },
    );
  }
  const x = { field: 't_s', type: 'quantitative', title: 'time (s)' } as const;
  const view = {
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 },
    encoding: {
      x,
      y: { field: 'per_s', type: 'quantitative', title: 'requests per second' },
      color: {
        field: 'series',
        type: 'nominal',
        title: 'per second',
        scale: { domain: [...GOODPUT_SERIES], range: ['#7f7f7f', '#1f77b4', '#2ca02c'] },
      },
      strokeDash: {
        field: 'series',
        type: 'nominal',
        title: 'per second',
        scale: {
          domain: [...GOODPUT_SERIES],
          range: [
            [6, 4],
            [1, 0],
            [1, 0],
          ],
        },
      },
      tooltip: [
        { field: 't_s', type: 'quantitative', title: 't (s)' },
        { field: 'series', type: 'nominal' },
        { field: 'per_s', type: 'quantitative', title: 'per second' },
      ],
    },
  };
  const spec = {
    $schema: VL_SCHEMA,
    title: {
      text: 'Goodput over time',
      subtitle: 'good completions per second against requests offered (first sends) per second',
    },
    config: chartConfig(),
    width: opts.width ?? CHART_WIDTH,
    height: 200,
    data: { values },
    ...shadeWarmup(view, opts.warmupS),
  };
  return spec as unknown as VegaLiteSpec;
}
