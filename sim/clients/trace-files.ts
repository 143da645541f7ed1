/**
 * Streaming trace readers: the only file I/O of the client models. Each reader yields one normalised
 * {@link TraceRecord} per data line and holds one line in memory at a time (at most
 * {@link MAX_TRACE_LINE_CHARS}); blank lines are skipped.
 */
import { open } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import {
  type DecisionLogDefaults,
  isReplayed,
  parseDecisionLogLine,
  reorderByArrival,
  serviceMsOf,
} from './decision-log.js';
import { TraceFormatError } from './errors.js';
import { type TokenHistograms, tokenHistograms } from './trace-empirical.js';
import {
  type AzureColumns,
  azureNormaliser,
  mooncakeNormaliser,
  parseAzureHeader,
  parseAzureLine,
  parseMooncakeLine,
  type TraceRecord,
} from './trace-parse.js';

/** Formats the readers understand: Azure CSV, Mooncake JSONL, and the proxy's JSONL decision log. */
export type TraceFormat = 'azure' | 'mooncake' | 'jsonl';

/** Options of the trace readers. */
export interface TraceReadOptions {
  /** Name of the file in error messages. Default: the file's base name. */
  name?: string;
  /** Stop after this many records. Default: all. */
  limit?: number;
  /** Skip lines that cannot be read (reporting each to `onBadLine`) instead of failing. Default false. */
  skipBadLines?: boolean;
  /** Called with the error of each skipped line. */
  onBadLine?: (err: TraceFormatError) => void;
}

/** Runs `read`; with skipBadLines, a TraceFormatError skips the line instead of failing. */
function guarded<T>(options: TraceReadOptions, read: () => T): T | undefined {
  if (!options.skipBadLines) return read();
  try {
    return read();
  } catch (e) {
    if (!(e instanceof TraceFormatError)) throw e;
    options.onBadLine?.(e);
    return undefined;
  }
}

/**
 * Longest trace line read, in characters (1 MiB of text: a real Azure or Mooncake row is under
 * 1 KiB, a decision-log line under 2 KiB). A longer line, or a file with no line break within
 * this much, stops the read with a TraceFormatError naming the file and line, before the line
 * is held in memory whole.
 */
export const MAX_TRACE_LINE_CHARS = 1 << 20;

function lineTooLong(file: string, line: number, head: string, maxChars: number): TraceFormatError {
  return new TraceFormatError(
    file,
    line,
    'line',
    head,
    `a line of at most ${maxChars} characters (this one is longer)`,
  );
}

/**
 * Lines of a text file, 1-based, streamed; `\r\n`, `\n` and `\r` each end a line.
 * @param file the file as named in errors (default: its base name)
 * @param maxChars longest line (see {@link MAX_TRACE_LINE_CHARS})
 * @throws TraceFormatError at the first line longer than `maxChars`
 */
export async function* readLines(
  path: string,
  file: string = basename(path),
  maxChars: number = MAX_TRACE_LINE_CHARS,
): AsyncGenerator<{ text: string; line: number }> {
  const handle = await open(path, 'r');
  const stream = handle.createReadStream({ encoding: 'utf8' });
  let line = 0;
  let pending = '';
  // The previous chunk ended in \r: a \n opening this one belongs to that line break.
  let afterCr = false;
  const breaks = /\r\n|\r|\n/g;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = afterCr && chunk.charCodeAt(0) === 10 ? 1 : 0;
      afterCr = false;
      breaks.lastIndex = start;
      for (let m = breaks.exec(chunk); m !== null; m = breaks.exec(chunk)) {
        const text = pending === '' ? chunk.slice(start, m.index) : pending + chunk.slice(start, m.index);
        pending = '';
        line += 1;
        if (text.length > maxChars) throw lineTooLong(file, line, text.slice(0, 60), maxChars);
        yield { text, line };
        start = m.index + m[0].length;
        if (m[0] === '\r' && start === chunk.length) afterCr = true;
      }
      if (start < chunk.length) {
        if (pending.length + chunk.length - start > maxChars) {
          throw lineTooLong(
            file,
            line + 1,
            (pending + chunk.slice(start, start + 60)).slice(0, 60),
            maxChars,
          );
        }
        pending += chunk.slice(start);
      }
    }
    if (pending !== '') {
      line += 1;
      yield { text: pending, line };
    }
  } finally {
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
}

/**
 * Streams an Azure LLM inference trace CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`).
 * @throws TraceFormatError on the first line that cannot be read.
 */
export async function* readAzureTrace(
  path: string,
  options: TraceReadOptions = {},
): AsyncGenerator<TraceRecord> {
  const file = options.name ?? basename(path);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const normalise = azureNormaliser();
  let columns: AzureColumns | undefined;
  let n = 0;
  for await (const { text, line } of readLines(path, file)) {
    if (n >= limit) return;
    if (text.trim() === '') continue;
    if (columns === undefined) {
      columns = parseAzureHeader(text, { file, line });
      continue;
    }
    const ref = { file, line };
    const cols = columns;
    const r = guarded(options, () => normalise(parseAzureLine(text, ref, cols), ref));
    if (r === undefined) continue;
    yield r;
    n += 1;
  }
}

/**
 * Streams a Mooncake trace JSONL (`timestamp`, `input_length`, `output_length`, `hash_ids`).
 * @throws TraceFormatError on the first line that cannot be read.
 */
export async function* readMooncakeTrace(
  path: string,
  options: TraceReadOptions = {},
): AsyncGenerator<TraceRecord> {
  const file = options.name ?? basename(path);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const normalise = mooncakeNormaliser();
  let n = 0;
  for await (const { text, line } of readLines(path, file)) {
    if (n >= limit) return;
    if (text.trim() === '') continue;
    const ref = { file, line };
    const r = guarded(options, () => normalise(parseMooncakeLine(text, ref), ref));
    if (r === undefined) continue;
    yield r;
    n += 1;
  }
}

/** The format of a trace file by its extension: `.csv` is Azure, `.jsonl` Mooncake; else undefined. */
export function traceFormatOf(path: string): TraceFormat | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'azure';
  if (ext === '.jsonl') return 'mooncake';
  return undefined;
}

/**
 * Streams a trace of either format (by `format`, else by extension).
 * @throws Error when the format is neither given nor recognisable.
 */
export function readTrace(
  path: string,
  options: TraceReadOptions & { format?: TraceFormat } = {},
): AsyncGenerator<TraceRecord> {
  const format = options.format ?? traceFormatOf(path);
  if (format === 'azure') return readAzureTrace(path, options);
  if (format === 'mooncake') return readMooncakeTrace(path, options);
  if (format === 'jsonl') return readDecisionLog(path, options);
  throw new Error(
    `${path}: unknown trace format; name it .csv (Azure) or .jsonl (Mooncake), or give the format`,
  );
}

/** Reorder window of a decision-log replay, ms: longer requests may come out late. */
export const DECISION_LOG_WINDOW_MS = 600_000;

/**
 * Streams the proxy's JSONL decision log as a trace in arrival order (see
 * `decision-log.ts`). Requests refused before the gate (401, 413) are left
 * out; lines without token counts take `defaults`. Each record carries the
 * recorded service time and TTFT of requests that ran.
 */
export async function* readDecisionLog(
  path: string,
  options: TraceReadOptions & { windowMs?: number; defaults?: DecisionLogDefaults } = {},
): AsyncGenerator<TraceRecord> {
  const file = options.name ?? basename(path);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const defaults = options.defaults ?? { promptTokens: 512, outputTokens: 128 };
  async function* rows(): AsyncGenerator<{ record: TraceRecord; endMs: number }> {
    for await (const { text, line } of readLines(path, file)) {
      if (text.trim() === '' || !isReplayed(text)) continue;
      const ref = { file, line };
      const row = guarded(options, () => parseDecisionLogLine(text, ref));
      if (row === undefined) continue;
      const ran = row.outcome === 'completed';
      const record: TraceRecord = {
        atMs: row.arrivalMs,
        promptTokens: Math.max(1, row.promptTokens ?? defaults.promptTokens),
        outputTokens: Math.max(1, row.outputTokens ?? defaults.outputTokens),
        line,
        inference: row.inference,
        protocol: row.protocol,
        ...(row.tenant === undefined ? {} : { tenant: row.tenant }),
        ...(ran
          ? {
              recorded: {
                serviceMs: serviceMsOf(row),
                ...(row.ttftMs === undefined ? {} : { ttftMs: row.ttftMs }),
              },
            }
          : {}),
      };
      yield { record, endMs: row.arrivalMs + row.durationMs };
    }
  }
  let base: number | undefined;
  let n = 0;
  for await (const r of reorderByArrival(rows(), options.windowMs ?? DECISION_LOG_WINDOW_MS)) {
    if (n >= limit) return;
    base ??= r.atMs;
    yield { ...r, atMs: Math.max(0, r.atMs - base) };
    n += 1;
  }
}

/** Empirical prompt and output token distributions of a trace file, read in one streaming pass. */
export function tokenHistogramsOfFile(
  path: string,
  options: TraceReadOptions & { format?: TraceFormat } = {},
): Promise<TokenHistograms> {
  return tokenHistograms(readTrace(path, options));
}
