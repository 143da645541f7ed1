/**
 * Chart (b): the gate's decisions per second, stacked by reason, over time.
 */
import type { SecondRow } from '../../sim/run/records.js';
import { orderReasons } from '../timeseries.js';
import type { VegaLiteSpec } from '../types.js';
import { bucketRows } from './buckets.js';
import { bucketSize, CHART_WIDTH, chartConfig, reasonRange, round, VL_SCHEMA } from './theme.js';

/** Options of the decisions chart. */
export interface DecisionsChartOptions {
  /** Most intervals before seconds are bucketed (default 240). */
  maxPoints?: number;
  width?: number;
}

/**
 * Builds the chart: one stacked area per reason that occurs in the run, as
 * a mean rate per interval, stacked in the decisions counter's order.
 */
export function decisionsChart(rows: readonly SecondRow[], opts: DecisionsChartOptions = {}): VegaLiteSpec {
  const totals = new Map<string, number>();
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.decisions)) totals.set(k, (totals.get(k) ?? 0) + v);
  }
  const reasons = orderReasons([...totals].filter(([, v]) => v > 0).map(([k]) => k));
  const values: { t_s: number; reason: string; rank: number; per_s: number }[] = [];
  for (const b of bucketRows(rows, bucketSize(rows.length, opts.maxPoints ?? 240))) {
    reasons.forEach((reason, rank) => {
      const sum = b.rows.reduce((s, r) => s + (r.decisions[reason] ?? 0), 0);
      values.push({ t_s: b.t_s, reason, rank, per_s: round(sum / b.seconds) });
    });
  }
  return {
    $schema: VL_SCHEMA,
    title: { text: 'Gate decisions by reason', subtitle: 'decisions per second, stacked' },
    config: chartConfig(),
    width: opts.width ?? CHART_WIDTH,
    height: 220,
    data: { values },
    mark: { type: 'area', interpolate: 'step-after' },
    encoding: {
      x: { field: 't_s', type: 'quantitative', title: 'time (s)' },
      y: { field: 'per_s', type: 'quantitative', stack: 'zero', title: 'decisions per second' },
      color: {
        field: 'reason',
        type: 'nominal',
        title: 'reason',
        scale: { domain: reasons, range: reasonRange(reasons) },
      },
      order: { field: 'rank', type: 'quantitative' },
      tooltip: [
        { field: 't_s', type: 'quantitative', title: 't (s)' },
        { field: 'reason', type: 'nominal' },
        { field: 'per_s', type: 'quantitative', title: 'per second' },
      ],
    },
  };
}
