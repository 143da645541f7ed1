/**
 * Reading saved outputs: a run directory (`summary.json`, `timeseries.csv`),
 * a sweep (`points.json`) and a cliff test (`cliff.json`); saving the last
 * two; and telling which one a directory holds.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { RunSummary, SecondRow } from '../sim/run/records.js';
import { parseTimeseriesCsv } from './timeseries.js';
import {
  CLIFF_FILE_KIND,
  CLIFF_MODES,
  type CliffData,
  type CliffFile,
  SWEEP_FILE_KIND,
  type SweepData,
  type SweepFile,
} from './types.js';

/** The file that marks each kind of output directory, in detection order. */
export const OUTPUT_MARKERS = { run: 'summary.json', sweep: 'points.json', cliff: 'cliff.json' } as const;

/** A kind of saved output. */
export type OutputKind = keyof typeof OUTPUT_MARKERS;

/** A saved output that cannot be read: names the file and what is wrong. */
export class ReportInputError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ReportInputError';
  }
}

/** Which output `dir` holds (the first marker file found), or null. */
export function detectOutput(dir: string): OutputKind | null {
  for (const [kind, file] of Object.entries(OUTPUT_MARKERS) as [OutputKind, string][]) {
    if (existsSync(join(dir, file))) return kind;
  }
  return null;
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ReportInputError(
      file,
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ReportInputError(file, `is not valid JSON (${(err as Error).message})`);
  }
}

function issues(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`)
    .join('; ');
}

const counts = z.record(z.string(), z.number());
const percentiles = z.looseObject({
  count: z.number(),
  p50: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
  mean: z.number(),
});

/** RunSummary as the report reads it; unknown extra fields pass through. */
const summaryShape = z.looseObject({
  scenario: z.string(),
  seed: z.number(),
  dialect: z.enum(['loxilb', 'smg']),
  duration_s: z.number(),
  warmup_s: z.number(),
  measured_s: z.number(),
  offered: z.number(),
  attempts: z.number(),
  completed: z.number(),
  good: z.number(),
  goodput_rps: z.number(),
  throughput_rps: z.number(),
  goodput_share: z.number(),
  shed_rate: z.number(),
  decisions: counts,
  sheds: counts,
  outcomes: counts,
  ttft_ms: percentiles,
  e2e_ms: percentiles,
  // Summaries written before TPOT was reported have neither field.
  tpot_ms: percentiles.default({ count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 }),
  output_tokens_per_s: z.number().nullable().default(null),
  // Summaries written before ITL was reported have neither field (the report then says ITL
  // was not measured; the request throughput is throughput_rps, which they have).
  itl_ms: percentiles.nullable().optional(),
  request_throughput_per_s: z.number().optional(),
  queue_wait_ms: percentiles,
  max_inflight: z.number(),
  max_queued: z.number(),
  ceilings: z.looseObject({
    max_outstanding: z.number(),
    queue_depth: z.number(),
    queue_wait_ms: z.number(),
  }),
  anomalies: counts,
  tenants: z.array(
    z.looseObject({
      tenant: z.string(),
      offered: z.number(),
      completed: z.number(),
      good: z.number(),
      goodput_rps: z.number(),
      good_share: z.number(),
    }),
  ),
  jain_fairness: z.number(),
  wasted_tokens: z.number(),
  retry_amplification: z.number(),
  conservation_ok: z.boolean(),
  events: z.number(),
});

/** A read run directory. */
export interface RunOutputs {
  summary: RunSummary;
  /** Empty when the directory has no timeseries.csv. */
  seconds: SecondRow[];
  hasTimeseries: boolean;
}

/** Reads `summary.json` and (if present) `timeseries.csv` from a run directory. */
export function readRunDir(dir: string): RunOutputs {
  const summaryFile = join(dir, OUTPUT_MARKERS.run);
  const raw = readJson(summaryFile);
  const checked = summaryShape.safeParse(raw);
  if (!checked.success)
    throw new ReportInputError(summaryFile, `is not a run summary (${issues(checked.error)})`);
  // The shape check covers the fields the report reads; the rest is the simulator's RunSummary.
  const summary = raw as RunSummary;
  const tsFile = join(dir, 'timeseries.csv');
  if (!existsSync(tsFile)) return { summary, seconds: [], hasTimeseries: false };
  try {
    return { summary, seconds: parseTimeseriesCsv(readFileSync(tsFile, 'utf8')), hasTimeseries: true };
  } catch (err) {
    throw new ReportInputError(tsFile, (err as Error).message);
  }
}

const params = z.record(z.string(), z.number());
const json: z.ZodType<unknown> = z.unknown();

const sweepShape = z.object({
  kind: z.literal(SWEEP_FILE_KIND),
  scenario: z.string().optional(),
  varied: z.array(z.string()),
  slo: z.array(z.string()),
  seeds: z.number().int().positive().optional(),
  points: z.array(
    z.object({
      params,
      goodput_rps: z.number(),
      ci_low: z.number(),
      ci_high: z.number(),
      feasible: z.boolean(),
      binding: z.string().optional(),
      figures: params.optional(),
    }),
  ),
  recommendation: z.object({
    feasible: z.boolean(),
    headline: z.string(),
    params: params.optional(),
    rule: json.optional(),
    flags: z.array(z.string()).optional(),
    policy: z.object({ file: z.string(), set: params }).optional(),
    binding: z.string().optional(),
    notes: z.array(z.string()).optional(),
  }),
});

const cliffShape = z.object({
  kind: z.literal(CLIFF_FILE_KIND),
  scenario: z.string().optional(),
  points: z.array(
    z.object({
      mode: z.enum(CLIFF_MODES),
      offered_rps: z.number(),
      goodput_rps: z.number(),
      throughput_rps: z.number(),
      shed_rate: z.number(),
      ttft_p95_ms: z.number().nullable(),
    }),
  ),
  notes: z.array(z.string()).optional(),
});

/** Reads and checks `points.json`. */
export function readSweepFile(file: string): SweepData {
  const checked = sweepShape.safeParse(readJson(file));
  if (!checked.success) throw new ReportInputError(file, `is not a sweep file (${issues(checked.error)})`);
  const { kind: _kind, ...data } = checked.data;
  // `rule` is checked as unknown; it is JSON because it came from JSON.parse.
  return data as SweepData;
}

/** Reads and checks `cliff.json`. */
export function readCliffFile(file: string): CliffData {
  const checked = cliffShape.safeParse(readJson(file));
  if (!checked.success) throw new ReportInputError(file, `is not a cliff file (${issues(checked.error)})`);
  const { kind: _kind, ...data } = checked.data;
  return data;
}

/** Saves a sweep as `<dir>/points.json`; returns the path. */
export function saveSweep(dir: string, data: SweepData): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, OUTPUT_MARKERS.sweep);
  const content: SweepFile = { kind: SWEEP_FILE_KIND, ...data };
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
  return file;
}

/** Saves a cliff test as `<dir>/cliff.json`; returns the path. */
export function saveCliff(dir: string, data: CliffData): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, OUTPUT_MARKERS.cliff);
  const content: CliffFile = { kind: CLIFF_FILE_KIND, ...data };
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
  return file;
}
