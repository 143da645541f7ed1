/**
 * The sweep report (`sluice size`): the recommendation and rule, the
 * goodput heatmap with the SLO-feasible cells, and every point ranked.
 */
import { sweepChart } from './charts/heatmap.js';
import { sweepRecommendationSections } from './findings.js';
import { sweepCsv, sweepTable } from './sweep-tables.js';
import type { Report, ReportFiles, ReportOptions, Section, SweepData } from './types.js';
import { writeOpts, writeReport } from './write.js';

/** Builds the sweep report. */
export function sweepReport(data: SweepData, opts: ReportOptions = {}): Report {
  const sections: Section[] = [...sweepRecommendationSections(data)];
  const spec = sweepChart(data);
  if (spec) {
    sections.push({
      kind: 'chart',
      name: 'sweep',
      title: data.varied.length >= 2 ? 'Goodput across the sweep' : `Goodput against ${data.varied[0] ?? ''}`,
      caption:
        data.varied.length >= 2
          ? `Goodput over ${data.varied[0]} and ${data.varied[1]}${data.varied.length > 2 ? `, one panel per value of ${data.varied.slice(2).join(', ')}` : ''}. Outlined cells meet every SLO.`
          : 'Goodput with its confidence interval across seeds; green points meet every SLO.',
      spec,
    });
  }
  sections.push(sweepTable(data), ...(opts.extraSections ?? []));
  const feasible = data.points.filter((p) => p.feasible).length;
  return {
    title: opts.title ?? `Sluice sizing sweep${data.scenario ? `: ${data.scenario}` : ''}`,
    subtitle: `${data.points.length} points over ${data.varied.join(', ') || 'no varied field'} · ${feasible} meet every SLO`,
    sections,
    csv: [sweepCsv(data)],
  };
}

/**
 * Writes the sweep report into `outDir`. To make it re-renderable with
 * `sluice report DIR`, save the data with saveSweep(DIR, data) and write the
 * report into `DIR/report`.
 */
export async function writeSweepReport(
  outDir: string,
  data: SweepData,
  opts: Omit<ReportOptions, 'outDir'> = {},
): Promise<ReportFiles> {
  return writeReport(outDir, sweepReport(data, opts), writeOpts(opts));
}
