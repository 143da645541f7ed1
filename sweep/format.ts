/**
 * The text output of a sweep: the points ranked, then the recommendation and
 * the rule (or SMG flags) to apply.
 */
import { pct } from '../reports/format.js';
import { textTable } from '../reports/text-table.js';
import type { PointResult } from './aggregate.js';
import { METRIC_NAMES, type MetricName } from './metrics.js';
import { comparePoints } from './ranking.js';
import { parseSlo } from './slo.js';
import type { SweepResult } from './sweep.js';

/** Left-aligned columns separated by two spaces. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return textTable(head, rows);
}

/** A figure for display: integers as is, others to 3 decimals. */
export function show(v: number | undefined): string {
  if (v === undefined) return '-';
  return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/\.?0+$/, '');
}

/** The figures shown as columns: those the SLOs constrain, then goodput share, shed rate and TTFT p95. */
export function shownMetrics(result: SweepResult): MetricName[] {
  const want = new Set<MetricName>(result.slo.map((s) => parseSlo(s).metric));
  for (const m of ['goodput_share', 'shed_rate', 'ttft_p95_ms'] as const) want.add(m);
  want.delete('goodput_rps');
  return METRIC_NAMES.filter((m) => want.has(m));
}

/** A figure of the points table: ratios (`*_share`, `*_rate`) as percentages, as every report table shows them. */
export function showFigure(name: string, v: number | undefined): string {
  if (v === undefined) return '-';
  return name.endsWith('_share') || name.endsWith('_rate') ? pct(v) : show(v);
}

/** The ranked table of points (at most `limit` rows; the rest counted). */
export function pointsTable(result: SweepResult, limit = 20): string {
  const metrics = shownMetrics(result);
  const ranked: PointResult[] = [...result.points].sort(comparePoints);
  const rows = ranked
    .slice(0, limit)
    .map((p) => [
      String(p.rank),
      ...result.varied.map((f) => show(p.params[f])),
      show(p.goodput_rps),
      `${show(p.ci_low)}–${show(p.ci_high)}`,
      ...metrics.map((m) => showFigure(m, p.figures[m])),
      p.feasible ? 'ok' : `misses ${p.failed.join(', ')}`,
    ]);
  const head = ['rank', ...result.varied, 'goodput', '95% CI', ...metrics, 'SLO'];
  const more =
    ranked.length > limit ? `\n... ${ranked.length - limit} more points (--json or --out for all)` : '';
  return `${table(head, rows)}${more}`;
}

/** The whole text report of a sweep. */
export function sweepText(result: SweepResult): string {
  const runs = result.points.length * result.seeds;
  const r = result.recommendation;
  const out: string[] = [
    `sluice size: ${result.scenario} (${result.dialect}), ${result.points.length} points × ${result.seeds} seed${result.seeds === 1 ? '' : 's'} = ${runs} runs`,
    `SLOs: ${result.slo.length > 0 ? result.slo.join(', ') : 'none'} (judged on the mean over seeds); goodput in req/s`,
    '',
    pointsTable(result),
    '',
    `${r.feasible ? 'Recommendation' : 'No recommendation'}: ${r.headline}`,
  ];
  for (const n of r.notes) out.push(`  ${n}`);
  if (r.rule) {
    out.push(
      '',
      result.dialect === 'smg' ? 'SMG settings:' : 'Rule to apply:',
      JSON.stringify(r.rule, null, 2),
    );
  }
  if (r.flags) out.push('', 'SMG flags:', `  ${r.flags.join(' ')}`);
  if (r.policy) {
    out.push('', `Policy to apply (set in ${r.policy.file}):`);
    for (const [k, v] of Object.entries(r.policy.set)) out.push(`  ${k}: ${v}`);
  }
  return `${out.join('\n')}\n`;
}
