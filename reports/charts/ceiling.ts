/**
 * Chart (a): requests in flight against the ceiling in force and the
 * configured ceiling; queued requests against the queue depth; and a strip
 * with the adaptive ceiling's state, all on one time axis.
 */
import type { SecondRow } from '../../sim/run/records.js';
import type { VegaLiteSpec } from '../types.js';
import { bucketRows, maxOf } from './buckets.js';
import {
  ADAPT_COLORS,
  adaptDomain,
  bucketSize,
  CHART_WIDTH,
  chartConfig,
  shadeWarmup,
  VL_SCHEMA,
} from './theme.js';

/** Options of the ceiling chart. */
export interface CeilingChartOptions {
  /** Most points per series before seconds are bucketed (default 360). */
  maxPoints?: number;
  width?: number;
  /** Seconds of warm-up to shade (none when 0 or absent). */
  warmupS?: number;
}

const INFLIGHT_SERIES = ['in flight', 'ceiling in force', 'configured ceiling'];
const QUEUE_SERIES = ['queued', 'queue depth'];

/** A run of equal adaptive states. */
interface StateSpan {
  from_s: number;
  to_s: number;
  state: string;
}

/** Merges consecutive seconds with the same adaptive state. */
export function adaptSpans(rows: readonly SecondRow[]): StateSpan[] {
  const spans: StateSpan[] = [];
  for (const r of rows) {
    const state = r.adapt_state === '' ? 'off' : r.adapt_state;
    const last = spans.at(-1);
    if (last && last.state === state && last.to_s === r.t_s) last.to_s = r.t_s + 1;
    else spans.push({ from_s: r.t_s, to_s: r.t_s + 1, state });
  }
  return spans;
}

/**
 * Builds the chart. Per bucket it shows the largest in-flight and queued
 * counts at any moment inside it (the rows' `*_max`), so a peak between two
 * second marks is drawn, and the ceilings in force at the bucket's end; a ceiling of 0
 * (none) leaves a gap.
 */
export function ceilingChart(rows: readonly SecondRow[], opts: CeilingChartOptions = {}): VegaLiteSpec {
  const width = opts.width ?? CHART_WIDTH;
  const buckets = bucketRows(rows, bucketSize(rows.length, opts.maxPoints ?? 360));
  const ceiling = (v: number): number | null => (v > 0 ? v : null);
  const inflight: { t_s: number; series: string; value: number | null }[] = [];
  const queue: { t_s: number; series: string; value: number | null }[] = [];
  const push = (t_s: number, peak: SecondRow[], end: SecondRow): void => {
    // In flight last, so its line is drawn over a ceiling it touches.
    inflight.push(
      { t_s, series: 'configured ceiling', value: ceiling(end.configured_limit) },
      { t_s, series: 'ceiling in force', value: ceiling(end.limit) },
      { t_s, series: 'in flight', value: maxOf(peak, (r) => Math.max(r.inflight_max, r.inflight)) },
    );
    queue.push(
      { t_s, series: 'queue depth', value: end.queue_depth },
      { t_s, series: 'queued', value: maxOf(peak, (r) => Math.max(r.queued_max, r.queued)) },
    );
  };
  for (const b of buckets) {
    const end = b.rows.at(-1);
    if (end) push(b.t_s, b.rows, end);
  }
  // Close the last step at the end of the last interval.
  const last = buckets.at(-1);
  const lastRow = last?.rows.at(-1);
  if (last && lastRow) push(last.t_s + last.seconds, last.rows, lastRow);
  const spans = adaptSpans(rows);
  const x = {
    field: 't_s',
    type: 'quantitative',
    title: null,
    axis: { labels: false, ticks: false },
  } as const;
  const line = { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 } as const;
  const spec = {
    $schema: VL_SCHEMA,
    title: {
      text: 'Requests in flight and queued against the ceilings',
      subtitle: 'largest value per interval',
    },
    config: chartConfig(),
    spacing: 6,
    resolve: { scale: { x: 'shared', color: 'independent', strokeDash: 'independent' } },
    vconcat: [
      shadeWarmup(
        {
          width,
          height: 170,
          data: { values: inflight },
          mark: line,
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: 'requests in flight' },
            color: {
              field: 'series',
              type: 'nominal',
              title: 'in flight',
              scale: { domain: INFLIGHT_SERIES, range: ['#1f77b4', '#d62728', '#7f7f7f'] },
            },
            strokeDash: {
              field: 'series',
              type: 'nominal',
              title: 'in flight',
              scale: {
                domain: INFLIGHT_SERIES,
                range: [
                  [1, 0],
                  [1, 0],
                  [6, 4],
                ],
              },
            },
            tooltip: [
              { field: 't_s', type: 'quantitative', title: 't (s)' },
              { field: 'series', type: 'nominal' },
              { field: 'value', type: 'quantitative' },
            ],
          },
        },
        opts.warmupS,
      ),
      shadeWarmup(
        {
          width,
          height: 120,
          data: { values: queue },
          mark: line,
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: 'requests queued' },
            color: {
              field: 'series',
              type: 'nominal',
              title: 'queue',
              scale: { domain: QUEUE_SERIES, range: ['#9467bd', '#7f7f7f'] },
            },
            strokeDash: {
              field: 'series',
              type: 'nominal',
              title: 'queue',
              scale: {
                domain: QUEUE_SERIES,
                range: [
                  [1, 0],
                  [6, 4],
                ],
              },
            },
            tooltip: [
              { field: 't_s', type: 'quantitative', title: 't (s)' },
              { field: 'series', type: 'nominal' },
              { field: 'value', type: 'quantitative' },
            ],
          },
        },
        opts.warmupS,
      ),
      {
        width,
        height: 18,
        data: { values: spans },
        mark: { type: 'rect' },
        encoding: {
          x: { field: 'from_s', type: 'quantitative', title: 'time (s)' },
          x2: { field: 'to_s' },
          color: {
            field: 'state',
            type: 'nominal',
            title: 'adaptive ceiling',
            scale: {
              domain: adaptDomain(spans.map((s) => s.state)),
              range: adaptDomain(spans.map((s) => s.state)).map((s) => ADAPT_COLORS[s] ?? '#17becf'),
            },
          },
          tooltip: [
            { field: 'state', type: 'nominal', title: 'adaptive state' },
            { field: 'from_s', type: 'quantitative', title: 'from (s)' },
            { field: 'to_s', type: 'quantitative', title: 'to (s)' },
          ],
        },
      },
    ],
  };
  return spec as unknown as VegaLiteSpec;
}
