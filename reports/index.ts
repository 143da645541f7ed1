/**
 * The report writer: Vega-Lite chart specs, server-side SVG/PNG rendering,
 * the self-contained HTML page, the Markdown summary and CSV exports, for
 * runs, sizing sweeps and cliff tests.
 */
export { ceilingChart } from './charts/ceiling.js';
export { cliffChart, MODE_LABELS } from './charts/cliff.js';
export { decisionsChart } from './charts/decisions.js';
export { sweepChart, sweepHeatmap, sweepLine } from './charts/heatmap.js';
export { latencyChart } from './charts/latency.js';
export { tenantChart } from './charts/tenants.js';
export { CHART_FONT, chartConfig, REASON_COLORS } from './charts/theme.js';
export { cliffReport, writeCliffReport } from './cliff-report.js';
export { CsvError, parseCsv, parseCsvRecords, toCsv } from './csv.js';
export {
  detectOutput,
  OUTPUT_MARKERS,
  type OutputKind,
  ReportInputError,
  type RunOutputs,
  readCliffFile,
  readRunDir,
  readSweepFile,
  saveCliff,
  saveSweep,
} from './files.js';
export { cliffFindings, runFindings } from './findings.js';
export { type HtmlOptions, htmlReport } from './html.js';
export { type MarkdownOptions, markdownReport } from './markdown.js';
export {
  FONT_FILES,
  MissingFontError,
  type RenderedChart,
  type RenderOptions,
  renderChart,
  renderSvg,
  svgToPng,
} from './render.js';
export { runReport, writeRunReport } from './run-report.js';
export { sweepReport, writeSweepReport } from './sweep-report.js';
export { sweepTable } from './sweep-tables.js';
export { cliffTable, summaryTable, tenantTable } from './tables.js';
export { formatTimeseriesCsv, parseTimeseriesCsv } from './timeseries.js';
export type * from './types.js';
export { CLIFF_FILE_KIND, CLIFF_MODES, SWEEP_FILE_KIND } from './types.js';
export { type WriteOptions, writeReport } from './write.js';
