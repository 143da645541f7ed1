/**
 * Chart (b): the gate's decisions per second over time. Each attempt is
 * counted once, by how the gate finally answered it (admitted or a refusal),
 * and those are stacked; the steps on the way (`queued`, and observe's
 * `observe_would_*`, which come on top of an admission) are drawn as lines
 * over the stack, so a request queued and then admitted is not counted twice.
 */
import type { SecondRow } from '../../sim/run/records.js';
import { orderReasons } from '../timeseries.js';
import type { VegaLiteSpec } from '../types.js';
import { bucketRows } from './buckets.js';
import { bucketSize, CHART_WIDTH, chartConfig, reasonRange, round, shadeWarmup, VL_SCHEMA } from './theme.js';

/** Options of the decisions chart. */
export interface DecisionsChartOptions {
  /** Most intervals before seconds are bucketed (default 240). */
  maxPoints?: number;
  width?: number;
  /** Seconds of warm-up to shade (none when 0 or absent). */
  warmupS?: number;
}

/** Reasons that are a step on the way, not the gate's final answer to an attempt. */
export const INTERIM_REASONS: ReadonlySet<string> = new Set([
  'queued',
  'observe_would_shed',
  'observe_would_queue',
]);

/**
 * Builds the chart: one stacked area per final reason that occurs in the run,
 * as a mean rate per interval, in the decisions counter's order; one line per
 * interim reason that occurs.
 */
export function decisionsChart(rows: readonly SecondRow[], opts: DecisionsChartOptions = {}): VegaLiteSpec {
  const totals = new Map<string, number>();
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.decisions)) totals.set(k, (totals.get(k) ?? 0) + v);
  }
  const reasons = orderReasons([...totals].filter(([, v]) => v > 0).map(([k]) => k));
  const values: { t_s: number; reason: string; rank: number; per_s: number; final: boolean }[] = [];
  for (const b of bucketRows(rows, bucketSize(rows.length, opts.maxPoints ?? 240))) {
    reasons.forEach((reason, rank) => {
      const sum = b.rows.reduce((s, r) => s + (r.decisions[reason] ?? 0), 0);
      values.push({
        t_s: b.t_s,
        reason,
        rank,
        per_s: round(sum / b.seconds),
        final: !INTERIM_REASONS.has(reason),
      });
    });
  }
  const x = { field: 't_s', type: 'quantitative', title: 'time (s)' } as const;
  const color = {
    field: 'reason',
    type: 'nominal',
    title: 'reason',
    scale: { domain: reasons, range: reasonRange(reasons) },
  } as const;
  const tooltip = [
    { field: 't_s', type: 'quantitative', title: 't (s)' },
    { field: 'reason', type: 'nominal' },
    { field: 'per_s', type: 'quantitative', title: 'per second' },
  ];
  const stacked = {
    transform: [{ filter: 'datum.final' }],
    mark: { type: 'area', interpolate: 'step-after' },
    encoding: {
      x,
      y: { field: 'per_s', type: 'quantitative', stack: 'zero', title: 'decisions per second' },
      color,
      order: { field: 'rank', type: 'quantitative' },
      tooltip,
    },
  };
  const interim = {
    transform: [{ filter: '!datum.final' }],
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6, strokeDash: [5, 3] },
    encoding: { x, y: { field: 'per_s', type: 'quantitative', stack: null }, color, tooltip },
  };
  const layers: Record<string, unknown>[] = [stacked];
  if (reasons.some((r) => INTERIM_REASONS.has(r))) layers.push(interim);
  const shaded = shadeWarmup({ mark: null, encoding: { x } }, opts.warmupS);
  const band = 'layer' in shaded ? shaded.layer.slice(0, 1) : [];
  const spec = {
    $schema: VL_SCHEMA,
    title: {
      text: 'Gate decisions by reason',
      subtitle:
        'final answers per second, stacked (each attempt once); dashed: queued and observe-only counts',
    },
    config: chartConfig(),
    width: opts.width ?? CHART_WIDTH,
    height: 220,
    data: { values },
    layer: [...band, ...layers],
  };
  return spec as unknown as VegaLiteSpec;
}
