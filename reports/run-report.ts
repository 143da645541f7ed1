/**
 * The run report: summary table, findings, in-flight/queue against the
 * ceilings with the adaptive state, decisions by reason, latency over time,
 * and per-tenant goodput share. `sluice run`, `check` and `observe` write it.
 */
import { join } from 'node:path';
import type { RunSummary, SecondRow } from '../sim/run/records.js';
import { ceilingChart } from './charts/ceiling.js';
import { decisionsChart } from './charts/decisions.js';
import { latencyChart } from './charts/latency.js';
import { tenantChart } from './charts/tenants.js';
import { readRunDir } from './files.js';
import { runFindingsSection } from './findings.js';
import { summaryTable, tenantCsv, tenantTable } from './tables.js';
import type { Report, ReportFiles, ReportOptions, Section } from './types.js';
import { writeOpts, writeReport } from './write.js';

/** Builds the run report's sections from a summary and its per-second rows. */
export function runReport(
  summary: RunSummary,
  seconds: readonly SecondRow[],
  opts: ReportOptions = {},
): Report {
  const sections: Section[] = [summaryTable(summary), runFindingsSection(summary)];
  if (seconds.length > 0) {
    sections.push(
      {
        kind: 'chart',
        name: 'ceiling',
        title: 'In flight and queued against the ceilings',
        caption:
          'Requests in flight against the ceiling in force (adaptive) and the configured one; queued requests against the queue depth; the strip below shows the adaptive ceiling state.',
        spec: ceilingChart(seconds),
      },
      {
        kind: 'chart',
        name: 'decisions',
        title: 'Gate decisions by reason',
        caption: 'Every gate decision per second, stacked by reason.',
        spec: decisionsChart(seconds),
      },
      {
        kind: 'chart',
        name: 'latency',
        title: 'Latency over time',
        caption: 'Time to first token and end-to-end latency, p50 and p95, per second.',
        spec: latencyChart(seconds),
      },
    );
  } else {
    sections.push({
      kind: 'text',
      title: 'Over time',
      paragraphs: ['This run has no timeseries.csv; the charts over time are left out.'],
    });
  }
  if (summary.tenants.length > 0) {
    sections.push(
      {
        kind: 'chart',
        name: 'tenants',
        title: 'Goodput share per tenant',
        caption:
          "A tenant whose goodput share is well below its share of the offered load is paying for others' load.",
        spec: tenantChart(summary.tenants, { jainFairness: summary.jain_fairness }),
      },
      tenantTable(summary.tenants),
    );
  }
  sections.push(...(opts.extraSections ?? []));
  return {
    title: opts.title ?? `Sluice run: ${summary.scenario}`,
    subtitle: `seed ${summary.seed} · ${summary.dialect} dialect · ${summary.measured_s} s measured`,
    sections,
    csv: summary.tenants.length > 0 ? [tenantCsv(summary.tenants)] : [],
  };
}

/**
 * Reads `summary.json` and `timeseries.csv` from `runDir` and writes the
 * report into `<runDir>/report` (or `opts.outDir`).
 */
export async function writeRunReport(runDir: string, opts: ReportOptions = {}): Promise<ReportFiles> {
  const { summary, seconds } = readRunDir(runDir);
  const outDir = opts.outDir ?? join(runDir, 'report');
  return writeReport(outDir, runReport(summary, seconds, opts), writeOpts(opts));
}
