/**
 * `sluice report DIR [--out DIR] [--json]`: re-renders the report of saved
 * outputs. DIR is a run directory (summary.json, timeseries.csv), a sizing
 * sweep (points.json) or a cliff test (cliff.json); the report goes to
 * DIR/report unless --out says otherwise.
 */
import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import { writeCliffReport } from '../reports/cliff-report.js';
import {
  detectOutput,
  OUTPUT_MARKERS,
  type OutputKind,
  ReportInputError,
  readCliffFile,
  readSweepFile,
} from '../reports/files.js';
import { writeRunReport } from '../reports/run-report.js';
import { writeSweepReport } from '../reports/sweep-report.js';
import type { ReportFiles } from '../reports/types.js';

/** Options of `sluice report`. */
interface ReportCliOptions {
  out?: string;
  json?: boolean;
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

/** The `report` subcommand. Input errors exit 2 through a CommanderError. */
export function reportCommand(): Command {
  const cmd = new Command('report')
    .description('re-render the charts, HTML and Markdown report of a saved run, sweep or cliff test')
    .argument('<dir>', 'a run directory (summary.json), a sweep (points.json) or a cliff test (cliff.json)')
    .option('--out <dir>', 'write the report here (default: <dir>/report)')
    .option('--json', 'print the files written as one JSON object')
    .exitOverride();
  cmd.action(async (dir: string, opts: ReportCliOptions) => {
    const write = (s: string): void => {
      const out = cmd.configureOutput().writeOut;
      if (out) out(s);
      else process.stdout.write(s);
    };
    let result: Awaited<ReturnType<typeof renderSavedReport>>;
    try {
      result = await renderSavedReport(dir, opts.out);
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
