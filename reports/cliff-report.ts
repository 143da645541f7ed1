/**
 * The cliff report: goodput against offered load for gate off, observe and
 * enforce, past the saturation point, with the verdict per mode.
 */
import { cliffChart } from './charts/cliff.js';
import { cliffFindings } from './findings.js';
import { cliffCsv, cliffTable } from './tables.js';
import type { CliffData, Report, ReportFiles, ReportOptions, Section } from './types.js';
import { writeOpts, writeReport } from './write.js';

/** Builds the cliff report. */
export function cliffReport(data: CliffData, opts: ReportOptions = {}): Report {
  const sections: Section[] = [
    { kind: 'text', title: 'Findings', bullets: [...cliffFindings(data.points), ...(data.notes ?? [])] },
    {
      kind: 'chart',
      name: 'cliff',
      title: 'Goodput against offered load',
      caption:
        'Goodput (good, on-time completions per second) and throughput as offered load rises past saturation, one line per gate mode. A healthy gate keeps goodput on a plateau; without one it falls off a cliff.',
      spec: cliffChart(data.points),
    },
    cliffTable(data.points),
    ...(opts.extraSections ?? []),
  ];
  return {
    title: opts.title ?? `Sluice cliff test${data.scenario ? `: ${data.scenario}` : ''}`,
    subtitle: 'goodput, not throughput, past the saturation point',
    sections,
    csv: [cliffCsv(data.points)],
  };
}

/**
 * Writes the cliff report into `outDir`. To make it re-renderable with
 * `sluice report DIR`, save the data with saveCliff(DIR, data) and write the
 * report into `DIR/report`.
 */
export async function writeCliffReport(
  outDir: string,
  data: CliffData,
  opts: Omit<ReportOptions, 'outDir'> = {},
): Promise<ReportFiles> {
  return writeReport(outDir, cliffReport(data, opts), writeOpts(opts));
}
