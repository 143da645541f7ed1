/**
 * Chart (e): per tenant, its share of the offered load beside its share of
 * the goodput. A tenant whose goodput bar is much shorter than its offered
 * bar is paying for someone else's load.
 */
import type { TenantSummary } from '../../sim/run/records.js';
import type { VegaLiteSpec } from '../types.js';
import { chartConfig, round, VL_SCHEMA } from './theme.js';

/** Options of the tenant chart. */
export interface TenantChartOptions {
  /** Tenants shown by name, largest offered first; the rest are one "other" bar (default 25). */
  maxTenants?: number;
  /** Jain's fairness index, shown in the subtitle. */
  jainFairness?: number;
  width?: number;
}

const MEASURES = ['share of offered load', 'share of goodput'];

/** Keeps the largest tenants by offered load and folds the rest into one row. */
export function topTenants(tenants: readonly TenantSummary[], max: number): TenantSummary[] {
  const sorted = [...tenants].sort(
    (a, b) => b.offered - a.offered || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0),
  );
  if (sorted.length <= max) return sorted;
  const kept = sorted.slice(0, Math.max(0, max - 1));
  const rest = sorted.slice(kept.length);
  const sum = (f: (t: TenantSummary) => number): number => rest.reduce((s, t) => s + f(t), 0);
  const offered = sum((t) => t.offered);
  const good = sum((t) => t.good);
  kept.push({
    tenant: `other (${rest.length} tenants)`,
    offered,
    completed: sum((t) => t.completed),
    good,
    goodput_rps: sum((t) => t.goodput_rps),
    good_share: offered > 0 ? good / offered : 0,
  });
  return kept;
}

/** Builds the chart (grouped horizontal bars, one group per tenant). */
export function tenantChart(tenants: readonly TenantSummary[], opts: TenantChartOptions = {}): VegaLiteSpec {
  const shown = topTenants(tenants, opts.maxTenants ?? 25);
  const offeredTotal = tenants.reduce((s, t) => s + t.offered, 0);
  const goodTotal = tenants.reduce((s, t) => s + t.good, 0);
  const values = shown.flatMap((t) =>
    MEASURES.map((measure, i) => ({
      tenant: t.tenant,
      measure,
      share: round(
        i === 0 ? (offeredTotal > 0 ? t.offered / offeredTotal : 0) : goodTotal > 0 ? t.good / goodTotal : 0,
      ),
      offered: t.offered,
      good: t.good,
      goodput_rps: round(t.goodput_rps),
      good_share: round(t.good_share),
    })),
  );
  const subtitle =
    opts.jainFairness === undefined
      ? 'each tenant: its part of all offered requests and of all good completions'
      : `each tenant: its part of all offered requests and of all good completions; Jain's index ${opts.jainFairness.toFixed(3)}`;
  return {
    $schema: VL_SCHEMA,
    title: { text: 'Goodput share per tenant', subtitle },
    config: chartConfig(),
    width: opts.width ?? 480,
    height: { step: 14 },
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'tenant', type: 'nominal', title: null, sort: shown.map((t) => t.tenant) },
      yOffset: { field: 'measure', type: 'nominal', sort: MEASURES },
      x: { field: 'share', type: 'quantitative', title: 'share', axis: { format: '.0%' } },
      color: {
        field: 'measure',
        type: 'nominal',
        title: null,
        scale: { domain: MEASURES, range: ['#c7c7c7', '#2ca02c'] },
        legend: { orient: 'bottom', labelLimit: 400 },
      },
      tooltip: [
        { field: 'tenant', type: 'nominal' },
        { field: 'measure', type: 'nominal' },
        { field: 'share', type: 'quantitative', format: '.1%' },
        { field: 'offered', type: 'quantitative' },
        { field: 'good', type: 'quantitative' },
        { field: 'goodput_rps', type: 'quantitative', title: 'goodput (rps)', format: '.2f' },
        { field: 'good_share', type: 'quantitative', title: 'good / offered', format: '.1%' },
      ],
    },
  };
}
