/**
 * The shapes the report writer reads and writes: chart inputs, the saved
 * sweep (`points.json`) and cliff (`cliff.json`) files, report sections and
 * the list of files a report wrote. See reports/README.md for the file shapes.
 */
import type { TopLevelSpec } from 'vega-lite';

/** A Vega-Lite specification as the chart builders return it (data inlined). */
export type VegaLiteSpec = TopLevelSpec;

/** A JSON value (for rules and recommendations passed through verbatim). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The lines a cliff test compares, in display order: the gate's three modes, and HAProxy 2.6 as the reference proxy. */
export const CLIFF_MODES = ['off', 'observe', 'enforce', 'haproxy'] as const;

/** A cliff line: a gate mode, or HAProxy. */
export type CliffMode = (typeof CLIFF_MODES)[number];

/** One run of a cliff test: one mode at one offered load. */
export interface CliffPoint {
  mode: CliffMode;
  offered_rps: number;
  goodput_rps: number;
  throughput_rps: number;
  /** Refused attempts / attempts (0..1). */
  shed_rate: number;
  /** p95 time to first token (ms); null when nothing produced a token. */
  ttft_p95_ms: number | null;
}

/** One grid point of a sizing sweep, its figures averaged over seeds. */
export interface SweepPoint {
  /** The varied rule fields and their values at this point. */
  params: Record<string, number>;
  goodput_rps: number;
  /** Confidence interval of goodput across seeds (equal to goodput_rps with one seed). */
  ci_low: number;
  ci_high: number;
  /** Meets every SLO. */
  feasible: boolean;
  /** The SLO expression that fails first here, when not feasible. */
  binding?: string;
  /** Any further figures (ttft_p95_ms, shed_rate, ...), shown in tables and tooltips. */
  figures?: Record<string, number>;
  /** The sweep's rank (1 = recommended), as `sluice size` writes it; ranked afresh when absent. */
  rank?: number;
}

/** What a sweep recommends. */
export interface SweepRecommendation {
  /** Some point met every SLO. */
  feasible: boolean;
  /** One-line verdict, e.g. "fc_max_outstanding=32 gives 41.2 rps (38.0–44.1) within every SLO". */
  headline: string;
  /** The recommended point's parameters (absent when nothing is feasible). */
  params?: Record<string, number>;
  /** The ready-to-apply rule (serviceArguments JSON). */
  rule?: JsonValue;
  /** SMG command-line flags, for an SMG-dialect scenario. */
  flags?: string[];
  /** The recommended point's policy fields (dotted paths) to set in the scenario's policy file. */
  policy?: { file: string; set: Record<string, number> };
  /** The constraint that binds when nothing is feasible. */
  binding?: string;
  /** Further lines of explanation. */
  notes?: string[];
}

/** Input of a sweep report; also the content of `points.json`. */
export interface SweepData {
  scenario?: string;
  /** The varied fields, in --vary order (the first two become x and y of the heatmap). */
  varied: string[];
  /** The SLO expressions as given (`ttft_p95_ms<=2000`). */
  slo: string[];
  /** Seeds per point. */
  seeds?: number;
  points: SweepPoint[];
  recommendation: SweepRecommendation;
}

/** Input of a cliff report; also the content of `cliff.json`. */
export interface CliffData {
  scenario?: string;
  /** Every (mode, offered load) run; each mode becomes one line. */
  points: CliffPoint[];
  notes?: string[];
}

/** Tag and version stored in `points.json` so `sluice report` can recognise it. */
export const SWEEP_FILE_KIND = 'sluice.sweep/v1';
/** Tag and version stored in `cliff.json`. */
export const CLIFF_FILE_KIND = 'sluice.cliff/v1';

/** `points.json`: a saved sweep. */
export type SweepFile = { kind: typeof SWEEP_FILE_KIND } & SweepData;
/** `cliff.json`: a saved cliff test. */
export type CliffFile = { kind: typeof CLIFF_FILE_KIND } & CliffData;

/** A chart in a report: its file stem, heading and spec. */
export interface ChartSection {
  kind: 'chart';
  /** File stem: `<name>.vl.json`, `<name>.svg`, `<name>.png`; also the HTML element id. */
  name: string;
  title: string;
  /** One paragraph under the heading saying how to read the chart. */
  caption?: string;
  spec: VegaLiteSpec;
}

/** A table in a report. Cells are shown as given (numbers formatted by the builder). */
export interface TableSection {
  kind: 'table';
  title: string;
  columns: string[];
  rows: (string | number)[][];
  /** Name of the CSV export of this table, if written (`tenants.csv`). */
  csv?: string;
  caption?: string;
}

/** Paragraphs or a bullet list. */
export interface TextSection {
  kind: 'text';
  title?: string;
  paragraphs?: string[];
  bullets?: string[];
}

/** A verbatim block (the recommended rule). */
export interface CodeSection {
  kind: 'code';
  title: string;
  language: 'json' | 'text';
  text: string;
  caption?: string;
}

/** One block of a report. */
export type Section = ChartSection | TableSection | TextSection | CodeSection;

/** A CSV export: raw (unformatted) values, written with csv-stringify. */
export interface CsvTable {
  /** File name in the report directory (`tenants.csv`). */
  file: string;
  columns: string[];
  rows: (string | number | boolean)[][];
}

/** A whole report, rendered to HTML and Markdown from the same sections. */
export interface Report {
  title: string;
  /** Line under the title (scenario, seed, ...). */
  subtitle?: string;
  sections: Section[];
  /** CSV files written beside the report (linked from the tables that name them). */
  csv?: CsvTable[];
}

/** The files of one chart. Paths are absolute. */
export interface ChartFiles {
  name: string;
  vegaLite: string;
  svg: string;
  png: string;
}

/** What a report writer wrote. Paths are absolute. */
export interface ReportFiles {
  dir: string;
  html: string;
  markdown: string;
  charts: ChartFiles[];
  csv: string[];
}

/** Options of every report writer. */
export interface ReportOptions {
  /** Where to write (default: `<dir>/report`). */
  outDir?: string;
  /** PNG pixels per SVG pixel (default 2). */
  pngScale?: number;
  /** Sections appended after the built-in ones (observe and check add theirs). */
  extraSections?: Section[];
  /** Replaces the default report title. */
  title?: string;
}
