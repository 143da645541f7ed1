/**
 * The engine fidelity chart (`docs/engine-fidelity.md`): one panel per figure of a profile,
 * published against simulated over concurrency (log scale). Each published point is a black
 * dash with its tolerance as a grey bar; the simulated figure is a blue circle, filled when the
 * point is claimed and hollow when not, labelled with its relative error (red when a claimed
 * figure is outside its tolerance). Built from `sim/engine/fidelity.ts` rows.
 */
import type { FidelityRow } from '../../sim/engine/fidelity.js';
import type { FidelityMetric } from '../../sim/engine/published.js';
import type { VegaLiteSpec } from '../types.js';
import { chartConfig, round, VL_SCHEMA } from './theme.js';

/** How each figure is named, on the page and on the chart's panels, in panel order. */
export const FIDELITY_METRIC_LABELS: Readonly<Record<FidelityMetric, string>> = {
  tpot_p50_ms: 'TPOT p50 (ms)',
  ttft_p50_ms: 'TTFT p50 (ms)',
  output_tokens_per_s: 'output tokens/s',
  output_tokens_per_s_vs_first: 'output tokens/s ÷ first point',
};

/** The two states of a simulated figure, as the legend names them. */
export const FIDELITY_STATUS = ['claimed', 'not claimed'] as const;

const SIM_COLOR = '#1f77b4';
const OUTSIDE_COLOR = '#d62728';

/** A relative error as the page prints it: sign, one decimal, percent. */
export function signedPct(x: number): string {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}

/** Options of the fidelity chart. */
export interface FidelityChartOptions {
  /** Width of one panel in pixels (default 200: three panels fit a page). */
  panelWidth?: number;
  /** Height of one panel in pixels (default 180). */
  panelHeight?: number;
  /** The concurrency axis' extent [lo, hi] (default: the rows' concurrencies ÷ 2 and × 1.8). */
  concurrencyDomain?: readonly [number, number];
}

/** One row of the chart's data: a published figure and its simulated value. */
export interface FidelityDatum {
  figure: string;
  concurrency: number;
  published: number;
  simulated: number;
  /** Published × (1 − tolerance) and × (1 + tolerance). */
  low: number;
  high: number;
  status: (typeof FIDELITY_STATUS)[number];
  /** The relative error as printed, "+2.3%". */
  error: string;
  /** A claimed figure outside its tolerance. */
  outside: boolean;
  /** 1.15 × the larger of `high` and `simulated`: room for a label above the top mark. */
  headroom: number;
}

/** The chart's data rows, panel by panel in {@link FIDELITY_METRIC_LABELS} order, then by concurrency. */
export function fidelityData(rows: readonly FidelityRow[]): FidelityDatum[] {
  const order = Object.keys(FIDELITY_METRIC_LABELS);
  return [...rows]
    .sort((a, b) => order.indexOf(a.metric) - order.indexOf(b.metric) || a.concurrency - b.concurrency)
    .map((r) => ({
      figure: FIDELITY_METRIC_LABELS[r.metric],
      concurrency: r.concurrency,
      published: round(r.published),
      simulated: round(r.simulated),
      low: round(r.published * (1 - r.tolerance)),
      high: round(r.published * (1 + r.tolerance)),
      status: r.claimed ? 'claimed' : 'not claimed',
      error: signedPct(r.relError),
      outside: r.claimed && Math.abs(r.relError) > r.tolerance,
      headroom: round(1.15 * Math.max(r.published * (1 + r.tolerance), r.simulated)),
    }));
}

/** Builds the chart of one profile's rows (every row of `evaluateSweep`, claimed or not). */
export function fidelityChart(
  profile: string,
  rows: readonly FidelityRow[],
  opts: FidelityChartOptions = {},
): VegaLiteSpec {
  const values = fidelityData(rows);
  const figures = [...new Set(values.map((v) => v.figure))];
  const concurrencies = [...new Set(values.map((v) => v.concurrency))].sort((a, b) => a - b);
  const domain = opts.concurrencyDomain ?? [
    round((concurrencies[0] ?? 1) / 2),
    round((concurrencies.at(-1) ?? 1) * 1.8),
  ];
  const x = {
    field: 'concurrency',
    type: 'quantitative',
    title: 'concurrency (log scale)',
    scale: { type: 'log', domain: [...domain] },
    axis: { values: concurrencies, format: 'd', grid: true },
  } as const;
  const y = { type: 'quantitative', title: null, axis: { labelFlush: true } } as const;
  // The error above its circle when the simulated figure is above the published one, below
  // it otherwise: on the side away from the published dash, clear of its neighbours' labels.
  const label = (side: 'above' | 'below') => ({
    transform: [{ filter: `datum.simulated ${side === 'above' ? '>=' : '<'} datum.published` }],
    mark: {
      type: 'text',
      baseline: side === 'above' ? 'bottom' : 'top',
      dy: side === 'above' ? -7 : 7,
      fontSize: 11,
      fontWeight: 'bold',
    },
    encoding: {
      x,
      y: { ...y, field: 'simulated' },
      text: { field: 'error', type: 'nominal' },
      color: { condition: { test: 'datum.outside', value: OUTSIDE_COLOR }, value: '#333333' },
    },
  });
  return {
    $schema: VL_SCHEMA,
    title: {
      text: `${profile}: simulated vs published`,
      subtitle: [
        'black dash: published, grey bar: ± tolerance; circle: simulated (hollow: not claimed),',
        'labelled with its error (red: claimed and outside the tolerance)',
      ],
    },
    config: { ...chartConfig(), header: { labelFontSize: 12, title: null } },
    data: { values },
    facet: {
      field: 'figure',
      type: 'nominal',
      sort: figures,
      header: { title: null, labelFontSize: 12, labelFontWeight: 'bold' },
    },
    columns: 3,
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: opts.panelWidth ?? 200,
      height: opts.panelHeight ?? 180,
      layer: [
        // Invisible: keeps the y scale clear of the panel's top so a label above fits.
        { mark: { type: 'point', opacity: 0, aria: false }, encoding: { x, y: { ...y, field: 'headroom' } } },
        {
          mark: { type: 'rule', color: '#9a9a9a', strokeWidth: 6, opacity: 0.45 },
          encoding: { x, y: { ...y, field: 'low' }, y2: { field: 'high' } },
        },
        {
          mark: { type: 'tick', orient: 'horizontal', color: 'black', opacity: 1, size: 14, thickness: 2 },
          encoding: { x, y: { ...y, field: 'published', scale: { zero: true } } },
        },
        {
          mark: { type: 'point', shape: 'circle', size: 55, strokeWidth: 2, stroke: SIM_COLOR, opacity: 1 },
          encoding: {
            x,
            y: { ...y, field: 'simulated' },
            fill: {
              field: 'status',
              type: 'nominal',
              title: 'simulated',
              scale: { domain: [...FIDELITY_STATUS], range: [SIM_COLOR, 'white'] },
              legend: { symbolStrokeColor: SIM_COLOR, symbolStrokeWidth: 2, orient: 'bottom' },
            },
          },
        },
        label('above'),
        label('below'),
      ],
    },
  } as unknown as VegaLiteSpec;
}
