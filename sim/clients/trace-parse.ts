/**
 * Pure parsers for public LLM request traces, one line at a time, and the normalisation of their rows
 * into {@link TraceRecord}s. No I/O here: `trace-files.ts` streams files through these functions.
 *
 * - Azure LLM inference 2023/2024 (Azure/AzurePublicDataset): CSV `TIMESTAMP,ContextTokens,GeneratedTokens`,
 *   the timestamp a wall time with 7 decimals (`2023-11-16 18:15:46.6805900`, 100 ns ticks, no zone).
 * - Mooncake FAST'25 (kvcache-ai/Mooncake): JSONL `{timestamp, input_length, output_length, hash_ids}`,
 *   the timestamp in ms from the trace start, hash_ids one id per 512-token prefix block.
 */
import { TraceFormatError } from './errors.js';

/** A request of a trace, normalised. */
export interface TraceRecord {
  /** Arrival, ms after the first record of the trace. */
  atMs: number;
  /** Prompt (context, input) tokens. */
  promptTokens: number;
  /** Generated (output) tokens. */
  outputTokens: number;
  /** Tenant id, when the trace carries one (neither Azure nor Mooncake does). */
  tenant?: string;
  /** Mooncake: ids of the 512-token prefix blocks; equal ids mean a shareable KV prefix. */
  prefixHashIds?: readonly number[];
  /** 1-based line of the record in its file. */
  line: number;
  /** False for a non-inference request (decision logs). Default true. */
  inference?: boolean;
  /** The protocol it came over (decision logs). */
  protocol?: 'http1' | 'h2';
  /** Timing recorded by a gateway for a request that ran (decision logs). */
  recorded?: RecordedTiming;
}

/** How long a request ran on its engine, as a gateway recorded it. */
export interface RecordedTiming {
  /** Admission → end, ms. */
  serviceMs: number;
  /** Admission → first data event, ms (streamed responses). */
  ttftMs?: number;
}

/** Where a line comes from, for error messages. */
export interface LineRef {
  /** File name as the caller names it. */
  file: string;
  /** 1-based line number. */
  line: number;
}

/** The column names of the Azure LLM inference trace, in file order. */
export const AZURE_COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;

/** Positions of the Azure columns in a file's rows (files so far all use the order of {@link AZURE_COLUMNS}). */
export interface AzureColumns {
  timestamp: number;
  contextTokens: number;
  generatedTokens: number;
  /** Number of columns in the header. */
  count: number;
}

/** Column positions of a file whose header is exactly {@link AZURE_COLUMNS}. */
export const AZURE_DEFAULT_COLUMNS: AzureColumns = {
  timestamp: 0,
  contextTokens: 1,
  generatedTokens: 2,
  count: 3,
};

/** A data row of the Azure trace. The timestamp is split so that no precision is lost. */
export interface AzureRow {
  /** Whole seconds of the timestamp since 1970-01-01 00:00:00, read as UTC. */
  timestampSec: number;
  /** Fraction of the second in 100 ns ticks, 0..9,999,999. */
  timestampTicks: number;
  contextTokens: number;
  generatedTokens: number;
}

/** A line of the Mooncake trace. */
export interface MooncakeRow {
  /** ms from the start of the trace (quantised in the conversation trace). */
  timestampMs: number;
  inputLength: number;
  outputLength: number;
  /** One id per 512-token block of the prompt. */
  hashIds: readonly number[];
}

const INTEGER = /^\d+$/;
const AZURE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/;
const AZURE_TIME_EXPECTED = "a time like '2023-11-16 18:15:46.6805900'";

/**
 * Reads the header line of an Azure trace and finds the three columns by name.
 * @throws TraceFormatError naming the missing column.
 */
export function parseAzureHeader(text: string, ref: LineRef): AzureColumns {
  const names = stripLineEnd(text)
    .replace(/^\uFEFF/, '')
    .split(',')
    .map((n) => n.trim());
  const find = (name: string): number => {
    const i = names.indexOf(name);
    if (i < 0) {
      throw new TraceFormatError(
        ref.file,
        ref.line,
        'header',
        stripLineEnd(text),
        `the columns ${AZURE_COLUMNS.join(',')}`,
      );
    }
    return i;
  };
  return {
    timestamp: find('TIMESTAMP'),
    contextTokens: find('ContextTokens'),
    generatedTokens: find('GeneratedTokens'),
    count: names.length,
  };
}

/**
 * Parses one data line of an Azure trace, e.g. `2023-11-16 18:15:46.6805900,374,44`.
 * @throws TraceFormatError naming file, line, column, value and what was expected.
 */
export function parseAzureLine(
  text: string,
  ref: LineRef,
  columns: AzureColumns = AZURE_DEFAULT_COLUMNS,
): AzureRow {
  const line = stripLineEnd(text);
  const cells = line.split(',');
  if (cells.length !== columns.count) {
    throw new TraceFormatError(ref.file, ref.line, 'row', line, `${columns.count} comma-separated fields`);
  }
  const stamp = cells[columns.timestamp] ?? '';
  const m = AZURE_TIME.exec(stamp);
  if (m === null) throw new TraceFormatError(ref.file, ref.line, 'TIMESTAMP', stamp, AZURE_TIME_EXPECTED);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    throw new TraceFormatError(ref.file, ref.line, 'TIMESTAMP', stamp, AZURE_TIME_EXPECTED);
  }
  return {
    timestampSec: ms / 1000,
    timestampTicks: Number((m[7] ?? '').padEnd(7, '0')),
    contextTokens: parseCount(cells[columns.contextTokens] ?? '', ref, 'ContextTokens'),
    generatedTokens: parseCount(cells[columns.generatedTokens] ?? '', ref, 'GeneratedTokens'),
  };
}

/**
 * Parses one line of a Mooncake trace, e.g.
 * `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}`.
 * Unknown fields are ignored.
 * @throws TraceFormatError naming file, line, field, value and what was expected.
 */
export function parseMooncakeLine(text: string, ref: LineRef): MooncakeRow {
  const line = stripLineEnd(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new TraceFormatError(ref.file, ref.line, 'line', line, 'a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TraceFormatError(ref.file, ref.line, 'line', line, 'a JSON object');
  }
  const obj = parsed as Record<string, unknown>;
  const count = (field: string): number => {
    const v = obj[field];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
    throw new TraceFormatError(ref.file, ref.line, field, shownJson(v), 'a non-negative integer');
  };
  const timestampMs = obj.timestamp;
  if (!(typeof timestampMs === 'number' && Number.isFinite(timestampMs) && timestampMs >= 0)) {
    throw new TraceFormatError(
      ref.file,
      ref.line,
      'timestamp',
      shownJson(timestampMs),
      'a number of ms >= 0',
    );
  }
  const hashIds = obj.hash_ids ?? [];
  if (
    !(Array.isArray(hashIds) && hashIds.every((h) => typeof h === 'number' && Number.isInteger(h) && h >= 0))
  ) {
    throw new TraceFormatError(
      ref.file,
      ref.line,
      'hash_ids',
      shownJson(hashIds),
      'a list of non-negative integers',
    );
  }
  return {
    timestampMs,
    inputLength: count('input_length'),
    outputLength: count('output_length'),
    hashIds: hashIds as number[],
  };
}

/**
 * Turns a file's rows into records with times relative to its first row, checking that time never runs
 * backwards. Create one per file; call in file order.
 */
export type TraceNormaliser<Row> = (row: Row, ref: LineRef) => TraceRecord;

/** Normaliser for Azure rows: atMs exact to the 100 ns tick, relative to the first row. */
export function azureNormaliser(): TraceNormaliser<AzureRow> {
  let first: AzureRow | undefined;
  let prev: AzureRow | undefined;
  return (row, ref) => {
    first ??= row;
    if (
      prev !== undefined &&
      (row.timestampSec < prev.timestampSec ||
        (row.timestampSec === prev.timestampSec && row.timestampTicks < prev.timestampTicks))
    ) {
      throw new TraceFormatError(
        ref.file,
        ref.line,
        'TIMESTAMP',
        azureStamp(row),
        `a time not before the previous row (${azureStamp(prev)})`,
      );
    }
    prev = row;
    return {
      atMs:
        (row.timestampSec - first.timestampSec) * 1000 + (row.timestampTicks - first.timestampTicks) / 10_000,
      promptTokens: row.contextTokens,
      outputTokens: row.generatedTokens,
      line: ref.line,
    };
  };
}

/** Normaliser for Mooncake rows: atMs relative to the first row. */
export function mooncakeNormaliser(): TraceNormaliser<MooncakeRow> {
  let firstMs: number | undefined;
  let prevMs = Number.NEGATIVE_INFINITY;
  return (row, ref) => {
    firstMs ??= row.timestampMs;
    if (row.timestampMs < prevMs) {
      throw new TraceFormatError(
        ref.file,
        ref.line,
        'timestamp',
        String(row.timestampMs),
        `a time not before the previous line (${prevMs})`,
      );
    }
    prevMs = row.timestampMs;
    return {
      atMs: row.timestampMs - firstMs,
      promptTokens: row.inputLength,
      outputTokens: row.outputLength,
      prefixHashIds: row.hashIds,
      line: ref.line,
    };
  };
}

/** The Azure timestamp text of a row (UTC reading), for messages. Pure arithmetic: no Date object. */
export function azureStamp(row: AzureRow): string {
  const days = Math.floor(row.timestampSec / 86_400);
  const secs = row.timestampSec - days * 86_400;
  const [y, m, d] = civilFromDays(days);
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(Math.floor(secs / 3600))}:${two(Math.floor((secs % 3600) / 60))}:${two(secs % 60)}`;
  return `${y}-${two(m)}-${two(d)} ${time}.${String(row.timestampTicks).padStart(7, '0')}`;
}

/** Days in month `m` (1-12) of year `y`, Gregorian. */
function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Year, month, day of the day `z` days after 1970-01-01 (Howard Hinnant's civil_from_days). */
function civilFromDays(z0: number): [number, number, number] {
  const z = z0 + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function parseCount(cell: string, ref: LineRef, field: string): number {
  const v = cell.trim();
  if (!INTEGER.test(v)) throw new TraceFormatError(ref.file, ref.line, field, cell, 'a non-negative integer');
  const n = Number(v);
  if (!Number.isSafeInteger(n))
    throw new TraceFormatError(ref.file, ref.line, field, cell, 'a non-negative integer');
  return n;
}

function stripLineEnd(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

function shownJson(v: unknown): string | undefined {
  return v === undefined ? undefined : JSON.stringify(v);
}
