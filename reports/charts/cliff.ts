/**
 * Chart (d): goodput against offered load, one line per gate mode (off,
 * observe, enforce) and for HAProxy when it ran, with throughput dashed beside
 * it and the diagonal where every offered request would be good.
 */
import { CLIFF_MODES, type CliffMode, type CliffPoint, type VegaLiteSpec } from '../types.js';
import { CHART_WIDTH, chartConfig, round, VL_SCHEMA } from './theme.js';

/** How each mode is labelled on the chart. */
export const MODE_LABELS: Readonly<Record<CliffMode, string>> = {
  off: 'gate off',
  observe: 'observe',
  enforce: 'enforce',
  haproxy: 'HAProxy 2.6',
};

const MODE_COLORS: Readonly<Record<CliffMode, string>> = {
  off: '#7f7f7f',
  observe: '#ff7f0e',
  enforce: '#1f77b4',
  haproxy: '#2ca02c',
};
const FIGURES = ['goodput', 'throughput'];

/** Options of the cliff chart. */
export interface CliffChartOptions {
  width?: number;
}

/** Builds the chart; points are sorted by mode then offered load. */
export function cliffChart(points: readonly CliffPoint[], opts: CliffChartOptions = {}): VegaLiteSpec {
  const modes = CLIFF_MODES.filter((m) => points.some((p) => p.mode === m));
  const sorted = [...points].sort(
    (a, b) => CLIFF_MODES.indexOf(a.mode) - CLIFF_MODES.indexOf(b.mode) || a.offered_rps - b.offered_rps,
  );
  const values = sorted.flatMap((p) =>
    FIGURES.map((figure) => ({
      mode: MODE_LABELS[p.mode],
      figure,
      offered_rps: round(p.offered_rps),
      rps: round(figure === 'goodput' ? p.goodput_rps : p.throughput_rps),
      shed_rate: round(p.shed_rate),
      ttft_p95_ms: p.ttft_p95_ms === null ? null : round(p.ttft_p95_ms),
    })),
  );
  const top = Math.max(0, ...points.map((p) => p.offered_rps));
  return {
    $schema: VL_SCHEMA,
    title: {
      text: 'Goodput against offered load',
      subtitle: 'solid: goodput (good, on-time completions/s); dashed: throughput; grey: every request good',
    },
    config: chartConfig(),
    width: opts.width ?? CHART_WIDTH,
    height: 300,
    layer: [
      {
        data: {
          values: [
            { offered_rps: 0, ideal: 0 },
            { offered_rps: round(top), ideal: round(top) },
          ],
        },
        mark: { type: 'line', color: '#bbbbbb', strokeDash: [2, 3] },
        encoding: {
          x: { field: 'offered_rps', type: 'quantitative' },
          y: { field: 'ideal', type: 'quantitative' },
        },
      },
      {
        data: { values },
        encoding: {
          x: { field: 'offered_rps', type: 'quantitative', title: 'offered load (requests/s)' },
          y: { field: 'rps', type: 'quantitative', title: 'requests/s' },
          color: {
            field: 'mode',
            type: 'nominal',
            title: 'line',
            scale: { domain: modes.map((m) => MODE_LABELS[m]), range: modes.map((m) => MODE_COLORS[m]) },
          },
          tooltip: [
            { field: 'mode', type: 'nominal' },
            { field: 'figure', type: 'nominal' },
            { field: 'offered_rps', type: 'quantitative', title: 'offered (rps)' },
            { field: 'rps', type: 'quantitative', title: 'rps', format: '.2f' },
            { field: 'shed_rate', type: 'quantitative', title: 'shed rate', format: '.1%' },
            { field: 'ttft_p95_ms', type: 'quantitative', title: 'TTFT p95 (ms)', format: ',.0f' },
          ],
        },
        layer: [
          {
            mark: { type: 'line', strokeWidth: 2 },
            encoding: {
              strokeDash: {
                field: 'figure',
                type: 'nominal',
                title: 'figure',
                scale: {
                  domain: FIGURES,
                  range: [
                    [1, 0],
                    [5, 4],
                  ],
                },
              },
            },
          },
          { mark: { type: 'point', filled: true, size: 36 } },
        ],
      },
    ],
  };
}
