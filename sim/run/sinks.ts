/**
 * Where a run's outputs go: files in an out directory (per-request records
 * and the time series streamed as CSV, the summary as JSON), or memory for
 * tests and sweeps.
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DECISION_REASONS } from '../../gate/decisions.js';
import {
  REQUEST_COLUMNS,
  type RequestRecord,
  type RunSummary,
  SECOND_SCALAR_COLUMNS,
  type SecondRow,
} from './records.js';

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
  ];
}

/** A time-series row as flat values in `secondColumns` order. */
export function flattenSecond(row: SecondRow): (string | number)[] {
  return [
    ...SECOND_SCALAR_COLUMNS.map((c) => row[c]),
    ...DECISION_REASONS.map((r) => row.decisions[r] ?? 0),
    ...row.endpoints.flatMap((e) => [e.running, e.waiting, e.kv_usage]),
  ];
}

/**
 * One CSV field per RFC 4180: quoted when it holds a comma, a quote or a line
 * break; booleans as true/false. (csv-stringify formats report exports; this
 * hot path writes millions of simple rows and is checked against it in tests.)
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
/** Room kept free for one field written byte by byte (longer ones take the slow path). */
const FIELD_ROOM = 1024;

const COMMA = 0x2c;
const NEWLINE = 0x0a;
/** "00" to "99" as ASCII: a number's digits are written two per division. */
const DIGIT_PAIRS = Uint8Array.from(
  Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''),
  (c) => c.charCodeAt(0),
);

/**
 * A CSV file written in chunks of bytes. Lines are encoded into an off-heap buffer as they
 * come, so the text waiting for the disk (a stream holds what it was given until the event
 * loop runs, i.e. until the next `flush`) is not a heap of strings for the garbage collector
 * to copy and promote. Hot rows can be written field by field ({@link text}, {@link num},
 * {@link bool}, {@link sep}, {@link end}) with no string built for the line.
 */
class CsvFile {
  readonly #out: WriteStream;
  #chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  #used = 0;
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

  /** A text field, quoted when it needs to be (as {@link csvField}). */
  text(s: string): void {
    const n = s.length;
    if (n > FIELD_ROOM) {
      this.#put(csvText(s));
      return;
    }
    this.#room(FIELD_ROOM);
    const b = this.#chunk;
    let at = this.#used;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Quotes, commas, line breaks and non-ASCII text take the general path.
      if (c >= 0x80 || c === 0x22 || c === COMMA || c === 0x0d || c === NEWLINE) {
        this.#put(csvText(s));
        return;
      }
      b[at++] = c;
    }
    this.#used = at;
  }

  /** A number, as `String(v)` prints it. */
  num(v: number): void {
    this.#room(FIELD_ROOM);
    if (v >= 0 && v < 1e12) {
      if (Number.isInteger(v)) {
        this.#digits(v);
        return;
      }
      // A value with at most three decimals (the run's times are rounded to µs) and at most
      // 15 significant digits: the shortest decimal that reads back as v, which is what
      // String prints, is k/1000 written out (no other decimal of 15 digits or fewer reads
      // back as the same double).
      const k = Math.round(v * 1000);
      if (k / 1000 === v) {
        const whole = Math.floor(k / 1000);
        let frac = k - whole * 1000;
        this.#digits(whole);
        const b = this.#chunk;
        b[this.#used++] = 0x2e;
        let width = 3;
        while (frac % 10 === 0) {
          frac /= 10;
          width--;
        }
        let at = this.#used + width;
        this.#used = at;
        for (let i = 0; i < width; i++) {
          const q = Math.floor(frac / 10);
          b[--at] = 0x30 + (frac - q * 10);
          frac = q;
        }
        return;
      }
    }
    this.#putAscii(String(v));
  }

  /** A non-negative integer below 1e15, in decimal digits (room already made). */
  #digits(v: number): void {
    const b = this.#chunk;
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    let at = this.#used + digits;
    this.#used = at;
    let x = v;
    while (x >= 100) {
      const q = Math.floor(x / 100);
      const r = (x - q * 100) * 2;
      b[--at] = DIGIT_PAIRS[r + 1] as number;
      b[--at] = DIGIT_PAIRS[r] as number;
      x = q;
    }
    if (x >= 10) {
      b[--at] = DIGIT_PAIRS[x * 2 + 1] as number;
      b[--at] = DIGIT_PAIRS[x * 2] as number;
    } else {
      b[--at] = 0x30 + x;
    }
  }

  /** A number, or nothing for ''. */
  numOrEmpty(v: number | ''): void {
    if (v !== '') this.num(v);
  }

  bool(v: boolean): void {
    this.#room(FIELD_ROOM);
    this.#putAscii(v ? 'true' : 'false');
  }

  /** The comma between two fields. */
  sep(): void {
    this.#room(1);
    this.#chunk[this.#used++] = COMMA;
  }

  /** Ends the line. */
  end(): void {
    this.#room(1);
    this.#chunk[this.#used++] = NEWLINE;
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
    this.#room(s.length * 3 + FIELD_ROOM);
    this.#used += this.#chunk.write(s, this.#used, 'utf8');
  }

  /** A short ASCII string (room already made). */
  #putAscii(s: string): void {
    const b = this.#chunk;
    let at = this.#used;
    for (let i = 0; i < s.length; i++) b[at++] = s.charCodeAt(i);
    this.#used = at;
  }

  /** Hands the gathered bytes to the stream (which keeps the buffer) and starts a new one. */
  #write(): void {
    if (this.#used === 0) return;
    this.#out.write(this.#chunk.subarray(0, this.#used));
    this.#chunk = Buffer.allocUnsafe(CHUNK_BYTES);
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

/**
 * Writes a request record's line into `f`, field by field: the same bytes as
 * `csvLine(REQUEST_COLUMNS.map((c) => r[c]))`: numbers and booleans as `String` prints them,
 * '' as nothing; enumerated fields (protocol, decision, outcome) go through {@link CsvFile.text}
 * like the others.
 */
function writeRequestLine(f: CsvFile, r: RequestRecord): void {
  f.text(r.id);
  f.sep();
  f.text(r.logical_id);
  f.sep();
  f.num(r.attempt);
  f.sep();
  f.text(r.tenant);
  f.sep();
  f.num(r.sent_ms);
  f.sep();
  f.text(r.protocol);
  f.sep();
  f.bool(r.stream);
  f.sep();
  f.bool(r.pd);
  f.sep();
  f.bool(r.inference);
  f.sep();
  f.num(r.prompt_tokens);
  f.sep();
  f.num(r.output_tokens);
  f.sep();
  f.text(r.decision);
  f.sep();
  f.text(r.outcome);
  f.sep();
  f.num(r.status);
  f.sep();
  f.text(r.error);
  f.sep();
  f.text(r.endpoint);
  f.sep();
  f.numOrEmpty(r.queue_wait_ms);
  f.sep();
  f.numOrEmpty(r.ttft_ms);
  f.sep();
  f.numOrEmpty(r.e2e_ms);
  f.sep();
  f.bool(r.good);
  f.sep();
  f.num(r.generated_tokens);
  f.sep();
  f.num(r.wasted_tokens);
  f.end();
}

/** Writes `requests.csv`, `timeseries.csv` and `summary.json` into `dir`. */
export class FileSink implements RunSink {
  readonly #requests: CsvFile;
  readonly #seconds: CsvFile;

  constructor(
    readonly dir: string,
    endpointIds: readonly string[],
  ) {
    mkdirSync(dir, { recursive: true });
    this.#requests = new CsvFile(join(dir, 'requests.csv'), REQUEST_COLUMNS);
    this.#seconds = new CsvFile(join(dir, 'timeseries.csv'), secondColumns(endpointIds));
  }

  request(r: RequestRecord): void {
    writeRequestLine(this.#requests, r);
  }

  second(row: SecondRow): void {
    this.#seconds.push(flattenSecond(row));
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
