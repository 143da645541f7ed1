/**
 * What every chart shares: the schema, the font (the one resvg is given, so
 * the SVG, the PNG and the page measure the same text), fixed colours per
 * decision reason, adaptive state and gate mode, and time bucketing.
 */

import type { Config } from 'vega-lite';
import type { DECISION_REASONS } from '../../gate/index.js';
import { ADAPT_STATES } from '../../gate/index.js';

/** The Vega-Lite schema every spec names. */
export const VL_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** The chart font; resvg is given the matching DejaVu files. */
export const CHART_FONT = 'DejaVu Sans';

/** Default plot width in pixels (the whole chart adds axes and legends). */
export const CHART_WIDTH = 640;

/** The config every spec carries. */
export function chartConfig(): Config {
  return {
    font: CHART_FONT,
    background: 'white',
    padding: 8,
    title: { fontSize: 15, anchor: 'start', subtitleColor: '#555', subtitleFontSize: 12 },
    axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#e6e6e6' },
    legend: { labelFontSize: 11, titleFontSize: 12, orient: 'right' },
    header: { labelFontSize: 12, titleFontSize: 12 },
    view: { stroke: '#ddd' },
  };
}

/** Colour of each decision reason: admitted green, queued blue, refusals warm, observe-only hatched greys. */
export const REASON_COLORS: Readonly<Record<(typeof DECISION_REASONS)[number], string>> = {
  admitted: '#2ca02c',
  capacity_shed: '#d62728',
  no_healthy_capacity: '#8c1c13',
  observe_would_shed: '#f7a35c',
  bypass_non_inference: '#b0b0b0',
  queued: '#1f77b4',
  queue_full: '#ff7f0e',
  queue_timeout: '#9467bd',
  cancelled: '#7f7f7f',
  drained: '#8c564b',
  observe_would_queue: '#aec7e8',
  draining: '#e377c2',
  tenant_share: '#bcbd22',
};

/** Colour for a reason the table does not know. */
export const OTHER_COLOR = '#17becf';

/** Colour of each adaptive ceiling state. */
export const ADAPT_COLORS: Readonly<Record<string, string>> = {
  off: '#d9d9d9',
  open: '#a1d99b',
  tightened: '#fc9272',
  frozen: '#9ecae1',
};

/** The states in legend order, then any unknown ones. */
export function adaptDomain(seen: Iterable<string>): string[] {
  const known: readonly string[] = ADAPT_STATES;
  const extra = [...new Set(seen)].filter((s) => !known.includes(s)).sort();
  return [...known, ...extra];
}

/** Colours of a reason list, in its order. */
export function reasonRange(reasons: readonly string[]): string[] {
  const table: Readonly<Record<string, string>> = REASON_COLORS;
  return reasons.map((r) => table[r] ?? OTHER_COLOR);
}

/** Seconds per bucket so a series of `n` seconds has at most `maxPoints` points. */
export function bucketSize(n: number, maxPoints: number): number {
  return Math.max(1, Math.ceil(n / Math.max(1, maxPoints)));
}

/** Rounds for chart data so specs stay small and byte-stable (6 significant digits). */
export function round(v: number): number {
  return Number.isInteger(v) ? v : Number(v.toPrecision(6));
}

/** Fill of the warm-up band on charts over time. */
export const WARMUP_FILL = '#000000';

/**
 * A layer shading the warm-up (0 to `warmupS`), the seconds the summary does not count.
 * `x` is the chart's x encoding (title, axis), reused so the layers share one axis.
 */
export function warmupLayer(warmupS: number, x: Record<string, unknown>): Record<string, unknown> {
  return {
    data: { values: [{ from_s: 0, to_s: warmupS, label: `warm-up, first ${warmupS} s (not counted)` }] },
    mark: { type: 'rect', color: WARMUP_FILL, opacity: 0.08 },
    encoding: {
      x: { ...x, field: 'from_s', type: 'quantitative' },
      x2: { field: 'to_s' },
      tooltip: [{ field: 'label', type: 'nominal', title: 'warm-up' }],
    },
  };
}

/**
 * A unit view (`mark` + `encoding`, data inherited) with the warm-up shaded beneath it when
 * `warmupS` > 0; the view unchanged otherwise.
 */
export function shadeWarmup<T extends { mark: unknown; encoding: { x: Record<string, unknown> } }>(
  view: T,
  warmupS: number | undefined,
): T | { layer: Record<string, unknown>[] } {
  if (warmupS === undefined || warmupS <= 0) return view;
  const { mark, encoding, ...rest } = view;
  return { ...rest, layer: [warmupLayer(warmupS, encoding.x), { mark, encoding }] };
}
