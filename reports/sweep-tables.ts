/**
 * The sweep points as a display table and as `points.csv`, both in the
 * order of the recommendation's ranking (rank 1 = the recommended point),
 * each with a rank column. The display table keeps to the figures a reader
 * judges a point by (the SLO figures, goodput share, shed rate, TTFT p95) so
 * it fits the page; points.csv has every figure.
 */
import { num, params, pct, rps } from './format.js';
import type { CsvTable, SweepData, SweepPoint, TableSection } from './types.js';

/** The columns points.csv always has, before the figures. */
const FIXED_CSV = ['rank', 'goodput_rps', 'ci_low', 'ci_high', 'feasible', 'binding'] as const;
/** Figures shown in the display table beside those the SLOs name. */
const SHOWN = ['goodput_share', 'shed_rate', 'ttft_p95_ms'] as const;

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A point with its rank (1 = best). */
export type RankedPoint = SweepPoint & { rank: number };

/**
 * The points best first. Points that carry the sweep's `rank` (points.json
 * from `sluice size`) keep it; otherwise they are ranked as sweep/ranking.ts
 * ranks them: feasible first, then goodput, the CI's low end, grid order.
 */
export function rankedPoints(data: SweepData): RankedPoint[] {
  const pts = data.points.map((p, index) => ({ p, index }));
  if (pts.length > 0 && pts.every(({ p }) => typeof p.rank === 'number' && p.rank > 0)) {
    return pts
      .sort((a, b) => (a.p.rank ?? 0) - (b.p.rank ?? 0) || a.index - b.index)
      .map(({ p }) => ({ ...p, rank: p.rank ?? 0 }));
  }
  return pts
    .sort(
      (a, b) =>
        Number(b.p.feasible) - Number(a.p.feasible) ||
        b.p.goodput_rps - a.p.goodput_rps ||
        b.p.ci_low - a.p.ci_low ||
        a.index - b.index ||
        cmp(params(a.p.params, data.varied), params(b.p.params, data.varied)),
    )
    .map(({ p }, i) => ({ ...p, rank: i + 1 }));
}

/** Figure names present on any point, sorted, leaving out those with a fixed column. */
function figureNames(data: SweepData): string[] {
  const fixed = new Set<string>([...FIXED_CSV, ...data.varied]);
  return [...new Set(data.points.flatMap((p) => Object.keys(p.figures ?? {})))]
    .filter((f) => !fixed.has(f))
    .sort();
}

/** The metric an SLO expression constrains (`ttft_p95_ms<=2000` → ttft_p95_ms). */
function sloMetric(expr: string): string | undefined {
  return /^\s*([A-Za-z0-9_]+)/.exec(expr)?.[1];
}

/** The figures of the display table: the SLOs' first, then SHOWN, where any point has them. */
export function shownFigures(data: SweepData): string[] {
  const present = new Set(figureNames(data));
  const want = [...data.slo.map(sloMetric), ...SHOWN].filter(
    (f): f is string => f !== undefined && present.has(f),
  );
  return [...new Set(want)];
}

/** A figure for display: ratios (`*_share`, `*_rate`) as percentages, as in the run summary. */
export function figureCell(name: string, v: number | undefined): string {
  if (v === undefined) return '';
  if (name.endsWith('_share') || name.endsWith('_rate')) return pct(v);
  if (name.endsWith('_ms')) return num(v);
  return num(v, Number.isInteger(v) ? 0 : 3);
}

/** The sweep points as a display table (ranked), naming `points.csv`. */
export function sweepTable(data: SweepData): TableSection {
  const figs = shownFigures(data);
  return {
    kind: 'table',
    title: 'Sweep points',
    caption:
      'Ranked as the recommendation ranks them (rank 1 is recommended): points meeting every SLO first, then by goodput, then the low end of its CI. CI: 95% confidence interval across seeds. Every figure of every point is in points.csv.',
    columns: ['rank', ...data.varied, 'goodput', 'CI', 'meets SLOs', ...figs],
    rows: rankedPoints(data).map((p) => [
      String(p.rank),
      ...data.varied.map((f) =>
        p.params[f] === undefined ? '' : num(p.params[f], Number.isInteger(p.params[f]) ? 0 : 2),
      ),
      rps(p.goodput_rps),
      `${num(p.ci_low, 2)}–${num(p.ci_high, 2)}`,
      p.feasible ? 'yes' : `no (${p.binding ?? 'an SLO'})`,
      ...figs.map((f) => figureCell(f, p.figures?.[f])),
    ]),
    csv: 'points.csv',
  };
}

/** The raw sweep points for `points.csv`, ranked, every figure once. */
export function sweepCsv(data: SweepData): CsvTable {
  const figs = figureNames(data);
  return {
    file: 'points.csv',
    columns: [FIXED_CSV[0], ...data.varied, ...FIXED_CSV.slice(1), ...figs],
    rows: rankedPoints(data).map((p) => [
      p.rank,
      ...data.varied.map((f) => p.params[f] ?? ''),
      p.goodput_rps,
      p.ci_low,
      p.ci_high,
      p.feasible,
      p.binding ?? '',
      ...figs.map((f) => p.figures?.[f] ?? ''),
    ]),
  };
}
