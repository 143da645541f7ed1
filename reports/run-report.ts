/**
 * The run report: summary table, findings, goodput over time, in-flight/queue against the
 * ceilings with the adaptive state, decisions by reason, latency over time,
 * and per-tenant goodput share. `sluice run`, `check` and `observe` write it.
 */
import { join } from 'node:path';
import type { RunSummary, SecondRow } from '../sim/run/records.js';
import { ceilingChart } from './charts/ceiling.js';
import { decisionsChart } from './charts/decisions.js';
import { goodputChart } from './charts/goodput.js';
import { latencyChart } from './charts/latency.js';
import { tenantChart } from './charts/tenants.js';
import { classSections } from './class-sections.js';
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
  const sections: Section[] = [summaryTable(summary, seconds), runFindingsSection(summary)];
  const warmupS = summary.warmup_s;
  const shaded =
    warmupS > 0
      ? ` The shaded band is the first ${warmupS} s of warm-up, which the summary does not count.`
      : '';
  if (seconds.length > 0) {
    sections.push(
      {
        kind: 'chart',
        name: 'goodput',
        title: 'Goodput over time',
        caption: `Good completions per second (completed, first token within its SLO, before its deadline) against the requests offered per second and all completions.${shaded}`,
        spec: goodputChart(seconds, { warmupS }),
      },
      gaugesUnseen(seconds)
        ? {
            kind: 'text',
            title: 'In flight and queued against the ceilings',
            paragraphs: [
              'The client saw no in-flight, queued or ceiling readings, so this chart is left out rather than drawn as zeros. On a real gateway the readings come in the admission response headers (X-Loxilb-Admission-Inflight, -Queued, -Limit): enable fc_expose_headers in the rule to see them.',
            ],
          }
        : {
            kind: 'chart',
            name: 'ceiling',
            title: 'In flight and queued against the ceilings',
            caption: `The most requests in flight at any moment of each interval against the ceiling in force (adaptive) and the configured one; the most queued against the queue depth; the strip below shows the adaptive ceiling state.${shaded}`,
            spec: ceilingChart(seconds, { warmupS }),
          },
      {
        kind: 'chart',
        name: 'decisions',
        title: 'Gate decisions by reason',
        caption: `The gate's final answer to each attempt per second, stacked by reason, so an attempt counts once; dashed lines: attempts queued (later admitted or refused) and observe mode's would-be refusals, which come on top of an admission.${shaded}`,
        spec: decisionsChart(seconds, { warmupS }),
      },
      {
        kind: 'chart',
        name: 'latency',
        title: 'Latency over time',
        caption: `Time to first token and end-to-end latency, p50 and p95, per second.${shaded}`,
        spec: latencyChart(seconds, { warmupS }),
      },
    );
  } else {
    sections.push({
      kind: 'text',
      title: 'Over time',
      paragraphs: ['This run has no timeseries.csv; the charts over time are left out.'],
    });
  }
  // One tenant's share is the run's: its chart would say nothing the summary does not.
  if (summary.tenants.length > 1) {
    sections.push({
      kind: 'chart',
      name: 'tenants',
      title: 'Goodput share per tenant',
      caption:
        "A tenant whose goodput share is well below its share of the offered load is paying for others' load.",
      spec: tenantChart(summary.tenants, { jainFairness: summary.jain_fairness }),
    });
  }
  if (summary.tenants.length > 0) sections.push(tenantTable(summary.tenants));
  sections.push(...classSections(summary));
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

/**
 * True when no row has an in-flight, queued or ceiling reading although requests completed: a
 * real-clock run whose gateway does not expose the admission headers (the simulator always
 * has the readings).
 */
export function gaugesUnseen(seconds: readonly SecondRow[]): boolean {
  const completed = seconds.reduce((s, r) => s + r.completed, 0);
  return (
    completed > 0 &&
    seconds.every((r) => r.inflight === 0 && r.inflight_max === 0 && r.queued_max === 0 && r.limit === 0)
  );
}
