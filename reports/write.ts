/**
 * The one report writer: renders every chart of a report to `<name>.vl.json`,
 * `<name>.svg` and `<name>.png`, writes its CSV exports, `report.html` and
 * `report.md`. The run, sweep, cliff, check and observe reports all end here.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { toCsv } from './csv.js';
import { CHART_NAME, htmlReport } from './html.js';
import { formatJson } from './json.js';
import { markdownReport } from './markdown.js';
import { renderChart } from './render.js';
import type { ChartFiles, Report, ReportFiles, ReportOptions } from './types.js';

/** Options of writeReport. */
export interface WriteOptions {
  /** PNG pixels per SVG pixel (default 2). */
  pngScale?: number;
}

/** Checks chart names are valid file stems and unique, and CSV names are plain file names. */
function checkNames(report: Report): void {
  const seen = new Set<string>();
  for (const s of report.sections) {
    if (s.kind !== 'chart') continue;
    if (!CHART_NAME.test(s.name)) throw new Error(`chart name "${s.name}" must match ${CHART_NAME}`);
    if (seen.has(s.name)) throw new Error(`two charts are named "${s.name}"`);
    seen.add(s.name);
  }
  for (const c of report.csv ?? []) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*\.csv$/.test(c.file))
      throw new Error(`CSV file name "${c.file}" is not a plain .csv name`);
  }
}

/** Writes `report` into `outDir` (created). Returns the absolute paths written. */
export async function writeReport(
  outDir: string,
  report: Report,
  opts: WriteOptions = {},
): Promise<ReportFiles> {
  checkNames(report);
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const charts: ChartFiles[] = [];
  for (const s of report.sections) {
    if (s.kind !== 'chart') continue;
    const files: ChartFiles = {
      name: s.name,
      vegaLite: join(dir, `${s.name}.vl.json`),
      svg: join(dir, `${s.name}.svg`),
      png: join(dir, `${s.name}.png`),
    };
    const rendered = await renderChart(s.spec, { pngScale: opts.pngScale ?? 2 });
    writeFileSync(files.vegaLite, formatJson(s.spec));
    writeFileSync(files.svg, rendered.svg);
    writeFileSync(files.png, rendered.png);
    charts.push(files);
  }
  const csv = (report.csv ?? []).map((c) => {
    const path = join(dir, c.file);
    writeFileSync(path, toCsv(c.columns, c.rows));
    return path;
  });
  const html = join(dir, 'report.html');
  const markdown = join(dir, 'report.md');
  writeFileSync(html, htmlReport(report, { fileLinks: true }));
  writeFileSync(markdown, markdownReport(report));
  return { dir, html, markdown, charts, csv };
}

/** The render options within ReportOptions. */
export function writeOpts(opts: ReportOptions): WriteOptions {
  return opts.pngScale === undefined ? {} : { pngScale: opts.pngScale };
}
