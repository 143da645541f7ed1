/**
 * `sluice report DIR [--out DIR] [--json]`: re-renders the report of saved
 * outputs. DIR is a run directory (summary.json, timeseries.csv), a sizing
 * sweep (points.json) or a cliff test (cliff.json); the report goes to
 * DIR/report unless --out says otherwise.
 */
import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import { compareSections } from '../reports/class-sections.js';
import { writeCliffReport } from '../reports/cliff-report.js';
import {
  detectOutput,
  OUTPUT_MARKERS,
  type OutputKind,
  ReportInputError,
  readCliffFile,
  readRunDir,
  readSweepFile,
} from '../reports/files.js';
import { writeRunReport } from '../reports/run-report.js';
import { writeSweepReport } from '../reports/sweep-report.js';
import type { Report, ReportFiles } from '../reports/types.js';
import { writeOpts, writeReport } from '../reports/write.js';

/** Options of `sluice report`. */
interface ReportCliOptions {
  out?: string;
  json?: boolean;
  /** Further run directories shown side by side with the first. */
  compare?: string[];
}

/** Error code of `sluice report` input errors (exit 2). */
export const REPORT_INPUT_ERROR = 'sluice.report.input';

/** Renders the report of `dir`; throws ReportInputError for unusable input. */
export async function renderSavedReport(
  dir: string,
  out: string | undefined,
): Promise<{ kind: OutputKind; files: ReportFiles }> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ReportInputError(dir, 'is not a directory');
  }
  const kind = detectOutput(dir);
  if (kind === null) {
    const { run, sweep, cliff } = OUTPUT_MARKERS;
    throw new ReportInputError(
      dir,
      `has no ${run} (a run), ${sweep} (a sizing sweep) or ${cliff} (a cliff test); nothing to report`,
    );
  }
  const outDir = out ?? join(dir, 'report');
  switch (kind) {
    case 'run':
      return { kind, files: await writeRunReport(dir, { outDir }) };
    case 'sweep':
      return { kind, files: await writeSweepReport(outDir, readSweepFile(join(dir, OUTPUT_MARKERS.sweep))) };
    case 'cliff':
      return { kind, files: await writeCliffReport(outDir, readCliffFile(join(dir, OUTPUT_MARKERS.cliff))) };
  }
}

/**
 * Renders runs side by side (`--compare`): the first run directory and the others, each labelled
 * by its scenario name, into `out` (default `<dir>/compare`).
 */
export async function renderComparison(
  dirs: readonly string[],
  out: string | undefined,
): Promise<{ kind: 'compare'; files: ReportFiles }> {
  const runs = dirs.map((d) => {
    if (!existsSync(d) || !statSync(d).isDirectory()) throw new ReportInputError(d, 'is not a directory');
    if (detectOutput(d) !== 'run')
      throw new ReportInputError(d, `has no ${OUTPUT_MARKERS.run}; --compare takes run directories`);
    return { dir: d, summary: readRunDir(d).summary };
  });
  const labels = runs.map((r) => r.summary.scenario);
  const unique = new Set(labels).size === labels.length;
  const labelled = runs.map((r, i) => ({
    label: unique ? labels[i]! : `${labels[i]} (${r.dir})`,
    summary: r.summary,
  }));
  const report: Report = {
    title: `Sluice runs side by side: ${labelled.map((r) => r.label).join(' vs ')}`,
    subtitle: labelled
      .map((r) => `${r.label}: seed ${r.summary.seed}, ${r.summary.measured_s} s measured`)
      .join(' · '),
    sections: compareSections(labelled),
    csv: [],
  };
  const outDir = out ?? join(dirs[0]!, 'compare');
  return { kind: 'compare', files: await writeReport(outDir, report, writeOpts({})) };
}

/** The `report` subcommand. Input errors exit 2 through a CommanderError. */
export function reportCommand(): Command {
  const cmd = new Command('report')
    .description('re-render the charts, HTML and Markdown report of a saved run, sweep or cliff test')
    .argument('<dir>', 'a run directory (summary.json), a sweep (points.json) or a cliff test (cliff.json)')
    .option('--out <dir>', 'write the report here (default: <dir>/report)')
    .option('--json', 'print the files written as one JSON object')
    .option(
      '--compare <dirs...>',
      'other run directories to put side by side with <dir> (per-class useful on-time completions; default out <dir>/compare)',
    )
    .exitOverride();
  cmd.action(async (dir: string, opts: ReportCliOptions) => {
    const write = (s: string): void => {
      const out = cmd.configureOutput().writeOut;
      if (out) out(s);
      else process.stdout.write(s);
    };
    let result: { kind: OutputKind | 'compare'; files: ReportFiles };
    try {
      result =
        opts.compare === undefined
          ? await renderSavedReport(dir, opts.out)
          : await renderComparison([dir, ...opts.compare], opts.out);
    } catch (err) {
      if (err instanceof ReportInputError)
        cmd.error(`error: ${err.message}`, { exitCode: 2, code: REPORT_INPUT_ERROR });
      throw err;
    }
    const { kind, files } = result;
    if (opts.json) {
      write(`${JSON.stringify({ kind, ...files })}\n`);
      return;
    }
    const rel = (p: string): string => relative(process.cwd(), p) || '.';
    write(
      `${kind} report: ${rel(files.html)}, ${rel(files.markdown)}; ${files.charts.length} charts (.vl.json, .svg, .png)` +
        `${files.csv.length > 0 ? `; ${files.csv.length} CSV` : ''} in ${rel(files.dir)}\n`,
    );
  });
  return cmd;
}
