/**
 * Where a run's outputs go: files in an out directory (per-request records
 * and the time series streamed as CSV, the summary as JSON), or memory for
 * tests and sweeps.
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DECISION_REASONS } from '../../gate/index.js';
import {
  CLASS_REQUEST_COLUMNS,
  REQUEST_COLUMNS,
  type RequestRecord,
  type RunSummary,
  SECOND_MAX_COLUMNS,
  SECOND_SCALAR_COLUMNS,
  type SecondRow,
} from './records.js';
import { encodeRequestLine, encodeRowLine, REQUEST_NUMBERS_ROOM } from './request-line.js';

/** Receives a run's outputs as they are produced. */
export interface RunSink {
  /** An ended attempt's record: the object is reused after the call (copy it to keep it). */
  request(r: RequestRecord): void;
  second(row: SecondRow): void;
  /** Lets buffered output drain (called between chunks of simulated time). */
  flush(): Promise<void>;
  close(summary: RunSummary): Promise<void>;
}

/** Keeps nothing but the summary (sweeps), or everything (tests) when `keep` is set. */
export class MemorySink implements RunSink {
  readonly requests: RequestRecord[] = [];
  readonly seconds: SecondRow[] = [];
  summary: RunSummary | undefined;
  constructor(readonly keep = true) {}
  request(r: RequestRecord): void {
    if (this.keep) this.requests.push({ ...r });
  }
  second(row: SecondRow): void {
    if (this.keep) this.seconds.push(row);
  }
  async flush(): Promise<void> {}
  async close(summary: RunSummary): Promise<void> {
    this.summary = summary;
  }
}

/** The flat columns of a time-series row for these endpoints. */
export function secondColumns(endpointIds: readonly string[]): string[] {
  return [
    ...SECOND_SCALAR_COLUMNS,
    ...DECISION_REASONS.map((r) => `decisions_${r}`),
    ...endpointIds.flatMap((id) => [`ep_${id}_running`, `ep_${id}_waiting`, `ep_${id}_kv_usage`]),
    ...SECOND_MAX_COLUMNS,
  ];
}

/** A time-series row as flat values in `secondColumns` order, written into `out` (emptied first). */
export function flattenSecond(row: SecondRow, out: (string | number)[] = []): (string | number)[] {
  out.length = 0;
  for (const c of SECOND_SCALAR_COLUMNS) out.push(row[c]);
  for (const r of DECISION_REASONS) out.push(row.decisions[r] ?? 0);
  for (const e of row.endpoints) out.push(e.running, e.waiting, e.kv_usage);
  for (const c of SECOND_MAX_COLUMNS) out.push(row[c]);
  return out;
}

/**
 * One CSV field per RFC 4180: quoted when it holds a comma, a quote or a line
 * break; booleans as true/false. (csv-stringify formats report exports; this
 * hot path writes millions of simple rows and is checked against it in tests.)
 * Kept by hand: 200,000 request rows take 83 ms here, 743 ms through csv-stringify (bench/csv-format.bench.ts).
 */
export function csvField(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return csvText(v === undefined || v === null ? '' : String(v));
}

const NEEDS_QUOTES = /[",\r\n]/;

/** A text field: quoted when it holds a comma, a quote or a line break. */
function csvText(s: string): string {
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV line (with its newline). */
export function csvLine(row: readonly unknown[]): string {
  let out = '';
  for (let i = 0; i < row.length; i++) out += (i === 0 ? '' : ',') + csvField(row[i]);
  return `${out}\n`;
}

/** Bytes of lines gathered before they are handed to the file stream. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A CSV file written in chunks of bytes. Lines are encoded into an off-heap buffer as they
 * come, so the text waiting for the disk (a stream holds what it was given until the event
 * loop runs, i.e. until the next `flush`) is not a heap of strings for the garbage collector
 * to copy and promote. A hot row can be encoded in place ({@link reserve}, {@link commit})
 * with no string built for the line.
 */
class CsvFile {
  readonly #out: WriteStream;
  #chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  #used = 0;
  /**
   * Chunks the stream has written out, to fill again: a few buffers that stay in cache
   * rather than a fresh 64 KiB of cold memory for every chunk (writing a line into memory
   * not in cache first reads that memory in).
   */
  readonly #spare: Buffer[] = [];
  constructor(path: string, columns: readonly string[]) {
    this.#out = createWriteStream(path);
    this.pushLine(csvLine(columns));
  }
  push(row: readonly unknown[]): void {
    this.pushLine(csvLine(row));
  }
  /** Adds one formatted line (with its newline). */
  pushLine(line: string): void {
    this.#room(line.length * 3);
    this.#put(line);
  }

  /** The chunk, with at least `bytes` free from {@link used} on (for a line encoded in place). */
  reserve(bytes: number): Uint8Array {
    this.#room(bytes);
    return this.#chunk;
  }

  /** Where the next line starts in the chunk. */
  get used(): number {
    return this.#used;
  }

  /** Takes the bytes up to `end`, encoded in place after {@link reserve}, as written. */
  commit(end: number): void {
    this.#used = end;
  }

  /**
   * Makes sure `bytes` are free in the chunk: hands a fuller one to the stream (a line may
   * span two chunks) and starts a new one, large enough.
   */
  #room(bytes: number): void {
    if (this.#used + bytes <= this.#chunk.length) return;
    this.#write();
    if (bytes > this.#chunk.length) this.#chunk = Buffer.allocUnsafe(bytes);
  }

  /** Any string, as UTF-8. */
  #put(s: string): void {
    this.#room(s.length * 3);
    this.#used += this.#chunk.write(s, this.#used, 'utf8');
  }

  /**
   * Hands the gathered bytes to the stream, which keeps the buffer until they are written
   * (then it is spare again), and starts a new one.
   */
  #write(): void {
    if (this.#used === 0) return;
    const full = this.#chunk;
    const spare = this.#spare;
    this.#out.write(full.subarray(0, this.#used), () => {
      if (full.length === CHUNK_BYTES) spare.push(full);
    });
    this.#chunk = spare.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
    this.#used = 0;
  }
  async flush(): Promise<void> {
    this.#write();
    if (this.#out.writableNeedDrain) await once(this.#out, 'drain');
  }
  async close(): Promise<void> {
    this.#write();
    this.#out.end();
    await once(this.#out, 'close');
  }
}

/** Room reserved in the chunk for one request line; longer text fields take the generic path. */
const REQUEST_LINE_ROOM = 2048;

/** Writes a request record's line into `f`, encoded in place when it can be (see `request-line.ts`). */
function writeRequestLine(f: CsvFile, r: RequestRecord): void {
  const b = f.reserve(REQUEST_LINE_ROOM);
  const start = f.used;
  const end = encodeRequestLine(b, start, r, start + REQUEST_LINE_ROOM - REQUEST_NUMBERS_ROOM);
  if (end >= 0) f.commit(end);
  else f.pushLine(csvLine(REQUEST_COLUMNS.map((c) => r[c])));
}

/** Writes a row of numbers and short text fields into `f`, encoded in place when it can be. */
function writeRowLine(f: CsvFile, row: readonly (string | number)[]): void {
  const room = row.length * 26 + 1;
  const b = f.reserve(room);
  const start = f.used;
  const end = encodeRowLine(b, start, row, start + room);
  if (end >= 0) f.commit(end);
  else f.push(row);
}

/** Every column of a request line with the class columns. */
const CLASS_LINE: readonly (keyof RequestRecord)[] = [...REQUEST_COLUMNS, ...CLASS_REQUEST_COLUMNS];

/** Writes `requests.csv`, `timeseries.csv` and `summary.json` into `dir`. */
export class FileSink implements RunSink {
  readonly #requests: CsvFile;
  readonly #seconds: CsvFile;
  /** A time-series row's values, refilled every second. */
  readonly #secondValues: (string | number)[] = [];

  /** The class columns follow the request columns (see {@link CLASS_REQUEST_COLUMNS}). */
  readonly #classColumns: boolean;

  /** @param opts.classColumns append the class columns to requests.csv (a run whose clients carry envelope inputs) */
  constructor(
    readonly dir: string,
    endpointIds: readonly string[],
    opts: { classColumns?: boolean } = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.#classColumns = opts.classColumns === true;
    this.#requests = new CsvFile(
      join(dir, 'requests.csv'),
      this.#classColumns ? CLASS_LINE : REQUEST_COLUMNS,
    );
    this.#seconds = new CsvFile(join(dir, 'timeseries.csv'), secondColumns(endpointIds));
  }

  request(r: RequestRecord): void {
    if (this.#classColumns) this.#requests.pushLine(csvLine(CLASS_LINE.map((c) => r[c] ?? '')));
    else writeRequestLine(this.#requests, r);
  }

  second(row: SecondRow): void {
    writeRowLine(this.#seconds, flattenSecond(row, this.#secondValues));
  }

  async flush(): Promise<void> {
    await this.#requests.flush();
    await this.#seconds.flush();
  }

  async close(summary: RunSummary): Promise<void> {
    await this.#requests.close();
    await this.#seconds.close();
    await writeFile(join(this.dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  }
}
