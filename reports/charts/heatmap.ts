/**
 * Chart (f): the sizing sweep. With two or more varied fields, a heatmap of
 * goodput over the first two (one panel per value of the others), the cells
 * meeting every SLO outlined and the recommended one starred. With one varied
 * field, goodput against it with the confidence interval; with none, no chart
 * (the points table says it all).
 */
import type { SweepData, SweepPoint, VegaLiteSpec } from '../types.js';
import { chartConfig, round, VL_SCHEMA } from './theme.js';

const SAFE_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FEASIBLE = 'meets every SLO';
const INFEASIBLE = 'misses an SLO';

/** A point's values shared by both chart shapes. */
function pointRow(p: SweepPoint, best: boolean) {
  const figures: Record<string, number> = {};
  for (const [k, v] of Object.entries(p.figures ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (SAFE_FIELD.test(k)) figures[`fig_${k}`] = round(v);
  }
  return {
    goodput_rps: round(p.goodput_rps),
    ci_low: round(p.ci_low),
    ci_high: round(p.ci_high),
    feasible: p.feasible,
    status: p.feasible ? FEASIBLE : INFEASIBLE,
    binding: p.binding ?? '',
    best,
    label: `${best ? '★ ' : ''}${p.goodput_rps.toFixed(1)}`,
    ...figures,
  };
}

/** The tooltip entries for figures present on any point. */
function figureTooltips(points: readonly SweepPoint[]) {
  const names = [...new Set(points.flatMap((p) => Object.keys(p.figures ?? {})))].filter((k) =>
    SAFE_FIELD.test(k),
  );
  return names.sort().map((k) => ({ field: `fig_${k}`, type: 'quantitative' as const, title: k }));
}

/** True when `p` is the recommended point. */
function isBest(p: SweepPoint, best: Record<string, number> | undefined): boolean {
  if (!best) return false;
  const keys = Object.keys(best);
  return keys.length > 0 && keys.every((k) => p.params[k] === best[k]);
}

/** The sweep chart for `data`, or null when no field varies. */
export function sweepChart(data: SweepData, opts: { width?: number } = {}): VegaLiteSpec | null {
  if (data.varied.length >= 2) return sweepHeatmap(data);
  if (data.varied.length === 1) return sweepLine(data, opts.width ?? 520);
  return null;
}

/** Heatmap of goodput over the first two varied fields. */
export function sweepHeatmap(data: SweepData): VegaLiteSpec {
  const [xf = 'x', yf = 'y', ...others] = data.varied;
  const best = data.recommendation.params;
  const values = data.points.map((p) => ({
    x: p.params[xf] ?? null,
    y: p.params[yf] ?? null,
    panel: others.map((f) => `${f}=${p.params[f] ?? '?'}`).join(', '),
    ...pointRow(p, isBest(p, best)),
  }));
  const goodputs = data.points.map((p) => p.goodput_rps);
  const mid = goodputs.length === 0 ? 0 : (Math.min(...goodputs) + Math.max(...goodputs)) / 2;
  const tooltip = [
    { field: 'x', type: 'quantitative' as const, title: xf },
    { field: 'y', type: 'quantitative' as const, title: yf },
    ...(others.length > 0 ? [{ field: 'panel', type: 'nominal' as const, title: others.join(', ') }] : []),
    { field: 'goodput_rps', type: 'quantitative' as const, title: 'goodput (rps)', format: '.2f' },
    { field: 'ci_low', type: 'quantitative' as const, title: 'CI low', format: '.2f' },
    { field: 'ci_high', type: 'quantitative' as const, title: 'CI high', format: '.2f' },
    { field: 'status', type: 'nominal' as const, title: 'SLOs' },
    { field: 'binding', type: 'nominal' as const, title: 'binding SLO' },
    ...figureTooltips(data.points),
  ];
  const layer = {
    encoding: {
      x: {
        field: 'x',
        type: 'ordinal' as const,
        title: xf,
        sort: 'ascending' as const,
        axis: { labelAngle: 0 },
      },
      y: { field: 'y', type: 'ordinal' as const, title: yf, sort: 'descending' as const },
    },
    layer: [
      {
        mark: { type: 'rect' as const },
        encoding: {
          color: {
            field: 'goodput_rps',
            type: 'quantitative' as const,
            title: 'goodput (rps)',
            scale: { scheme: 'viridis' },
          },
          opacity: { condition: { test: 'datum.feasible', value: 1 }, value: 0.35 },
          tooltip,
        },
      },
      {
        transform: [{ filter: 'datum.feasible' }],
        mark: { type: 'rect' as const, fillOpacity: 0, stroke: '#111111', strokeWidth: 2.5 },
      },
      {
        mark: { type: 'text' as const, fontSize: 11 },
        encoding: {
          text: { field: 'label', type: 'nominal' as const },
          color: {
            condition: { test: `datum.feasible && datum.goodput_rps < ${round(mid)}`, value: 'white' },
            value: 'black',
          },
          tooltip,
        },
      },
    ],
  };
  const title = {
    text: 'Goodput across the sweep',
    subtitle: `outlined: meets every SLO (${data.slo.join(', ') || 'none given'}); faded: misses one; ★ recommended`,
  };
  const base = { $schema: VL_SCHEMA, title, config: chartConfig(), data: { values } };
  const size = { width: { step: 64 }, height: { step: 34 } };
  if (others.length === 0) return { ...base, ...size, ...layer };
  return {
    ...base,
    facet: { field: 'panel', type: 'nominal', title: others.join(', '), header: { labelOrient: 'top' } },
    columns: 3,
    spec: { ...size, ...layer },
  };
}

/** Goodput against the one varied field, with its confidence interval. */
export function sweepLine(data: SweepData, width: number): VegaLiteSpec {
  const [field = 'x'] = data.varied;
  const best = data.recommendation.params;
  const values = [...data.points]
    .sort((a, b) => (a.params[field] ?? 0) - (b.params[field] ?? 0))
    .map((p) => ({ x: p.params[field] ?? null, ...pointRow(p, isBest(p, best)) }));
  const x = { field: 'x', type: 'quantitative' as const, title: field };
  const tooltip = [
    { field: 'x', type: 'quantitative' as const, title: field },
    { field: 'goodput_rps', type: 'quantitative' as const, title: 'goodput (rps)', format: '.2f' },
    { field: 'ci_low', type: 'quantitative' as const, title: 'CI low', format: '.2f' },
    { field: 'ci_high', type: 'quantitative' as const, title: 'CI high', format: '.2f' },
    { field: 'status', type: 'nominal' as const, title: 'SLOs' },
    { field: 'binding', type: 'nominal' as const, title: 'binding SLO' },
    ...figureTooltips(data.points),
  ];
  return {
    $schema: VL_SCHEMA,
    title: {
      text: `Goodput against ${field}`,
      subtitle: `band: confidence interval across seeds; SLOs: ${data.slo.join(', ') || 'none given'}; ★ recommended`,
    },
    config: chartConfig(),
    width,
    height: 260,
    data: { values },
    layer: [
      {
        mark: { type: 'area', opacity: 0.2, color: '#1f77b4' },
        encoding: { x, y: { field: 'ci_low', type: 'quantitative' }, y2: { field: 'ci_high' } },
      },
      {
        mark: { type: 'line', color: '#1f77b4' },
        encoding: { x, y: { field: 'goodput_rps', type: 'quantitative', title: 'goodput (rps)' } },
      },
      {
        mark: { type: 'point', filled: true, size: 70 },
        encoding: {
          x,
          y: { field: 'goodput_rps', type: 'quantitative' },
          color: {
            field: 'status',
            type: 'nominal',
            title: null,
            scale: { domain: [FEASIBLE, INFEASIBLE], range: ['#2ca02c', '#d62728'] },
          },
          shape: {
            field: 'status',
            type: 'nominal',
            title: null,
            scale: { domain: [FEASIBLE, INFEASIBLE], range: ['circle', 'cross'] },
          },
          tooltip,
        },
      },
      {
        transform: [{ filter: 'datum.best' }],
        mark: { type: 'text', text: '★ recommended', align: 'right', dx: -4, dy: -14, fontSize: 11 },
        encoding: { x, y: { field: 'goodput_rps', type: 'quantitative' } },
      },
    ],
  };
}
