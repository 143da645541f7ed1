/**
 * The proxy's JSONL decision log as a trace (see proxy/README.md for its
 * schema): one line per request, written when the request ENDS. A replay
 * needs arrival order, so `reorderByArrival` releases records through a
 * bounded window: a record is released once a line ending later than its
 * arrival plus the window has been read. Memory is bounded by the requests
 * that arrive within one window, not by the file. The line's shape and its decision names are
 * the proxy's own record (`decision-record.ts`), so a field the writer renames breaks this
 * reader at compile time.
 */
import { type DecisionRecord, LOG_DECISIONS } from './decision-record.js';
import { TraceFormatError } from './errors.js';
import type { LineRef, TraceRecord } from './trace-parse.js';

/** The fields of a decision-log line a replay uses. */
export interface DecisionLogRow {
  /** Arrival, ms since the epoch. */
  arrivalMs: number;
  tenant: string | undefined;
  inference: boolean;
  protocol: 'http1' | 'h2';
  /** A `RequestOutcome` in a log the proxy wrote (not checked: `completed` when absent). */
  outcome: string;
  queuedMs: number;
  /** Admission → first data event, ms; undefined for unstreamed responses. */
  ttftMs: number | undefined;
  /** Arrival → end, ms. */
  durationMs: number;
  promptTokens: number | undefined;
  outputTokens: number | undefined;
}

const DECISIONS: ReadonlySet<string> = new Set(LOG_DECISIONS);

/** A decision-log line as parsed JSON: the record's fields, each of any type until checked. */
type RawLine = { readonly [K in keyof DecisionRecord]?: unknown };

/** The record's numeric fields (numbers, or null where not applicable). */
type NumericField = {
  [K in keyof DecisionRecord]-?: DecisionRecord[K] extends number | null ? K : never;
}[keyof DecisionRecord];

/** The value as it appears in the file, for error messages. */
function shown(v: unknown): string | undefined {
  return v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
}

function num(o: RawLine, key: NumericField, ref: LineRef, nullable: boolean): number | undefined {
  const v = o[key];
  if (v === null && nullable) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new TraceFormatError(
      ref.file,
      ref.line,
      key,
      shown(v),
      nullable ? 'a number >= 0 or null' : 'a number >= 0',
    );
  }
  return v;
}

/** Parses one decision-log line. @throws TraceFormatError naming the file, line, field and value */
export function parseDecisionLogLine(text: string, ref: LineRef): DecisionLogRow {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new TraceFormatError(ref.file, ref.line, 'line', text.slice(0, 40), 'one JSON object');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TraceFormatError(ref.file, ref.line, 'line', text.slice(0, 40), 'one JSON object');
  }
  const r = o as RawLine;
  const time = r.time;
  const arrivalMs = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  if (!Number.isFinite(arrivalMs)) {
    throw new TraceFormatError(
      ref.file,
      ref.line,
      'time',
      shown(time),
      'an ISO 8601 time such as 2026-11-30T12:00:00.000Z',
    );
  }
  if (typeof r.decision !== 'string' || !DECISIONS.has(r.decision)) {
    throw new TraceFormatError(ref.file, ref.line, 'decision', shown(r.decision), [...DECISIONS].join(', '));
  }
  if (r.tenant !== null && typeof r.tenant !== 'string') {
    throw new TraceFormatError(ref.file, ref.line, 'tenant', shown(r.tenant), 'a string or null');
  }
  const protocol = r.protocol === 'h2' ? 'h2' : 'http1';
  return {
    arrivalMs,
    tenant: typeof r.tenant === 'string' ? r.tenant : undefined,
    inference: r.reason !== 'bypass_non_inference' && r.decision !== 'bypass',
    protocol,
    outcome: typeof r.outcome === 'string' ? r.outcome : 'completed',
    queuedMs: num(r, 'queued_ms', ref, true) ?? 0,
    ttftMs: num(r, 'ttft_ms', ref, true),
    durationMs: num(r, 'duration_ms', ref, false) ?? 0,
    promptTokens: num(r, 'prompt_tokens', ref, true),
    outputTokens: num(r, 'output_tokens', ref, true),
  };
}

/** Whether a logged request is replayed: requests refused before the gate (401, 413) are not. */
export function isReplayed(line: string): boolean {
  return !line.includes('"decision":"unauthorized"') && !line.includes('"decision":"rejected"');
}

/** Token counts used when a line has none (the backend sent no usage). */
export interface DecisionLogDefaults {
  promptTokens: number;
  outputTokens: number;
}

/** Service time of a logged request that ran: arrival → end, less its queue wait. */
export function serviceMsOf(row: DecisionLogRow): number {
  return Math.max(0, row.durationMs - row.queuedMs);
}

/**
 * Releases records in arrival order from lines in end order, holding each
 * until a line has ended `windowMs` past its arrival (or the input ends).
 * A request longer than the window can come out late; it is then released at
 * once with its own time (the replay clamps it to the clock).
 */
export async function* reorderByArrival(
  rows: AsyncIterable<{ record: TraceRecord; endMs: number }>,
  windowMs: number,
): AsyncGenerator<TraceRecord> {
  const heap: TraceRecord[] = [];
  const push = (r: TraceRecord): void => {
    heap.push(r);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (before(heap[p]!, heap[i]!)) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const pop = (): TraceRecord => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return top;
  };
  for await (const { record, endMs } of rows) {
    push(record);
    while (heap.length > 0 && heap[0]!.atMs + windowMs <= endMs) yield pop();
  }
  while (heap.length > 0) yield pop();
}

function before(a: TraceRecord, b: TraceRecord): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.line < b.line);
}
