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
import { REQUEST_COLUMNS, type RequestRecord, type RunSummary, type SecondRow } from './records.js';

/** Receives a run's outputs as they are produced. */
export interface RunSink {
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
    if (this.keep) this.requests.push(r);
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
    't_s',
    'inflight',
    'queued',
    'limit',
    'configured_limit',
    'queue_depth',
    'adapt_state',
    'arrivals',
    'completed',
    'good',
    'ttft_p50_ms',
    'ttft_p95_ms',
    'e2e_p50_ms',
    'e2e_p95_ms',
    ...DECISION_REASONS.map((r) => `decisions_${r}`),
    ...endpointIds.flatMap((id) => [`ep_${id}_running`, `ep_${id}_waiting`, `ep_${id}_kv_usage`]),
  ];
}

/** A time-series row as flat values in `secondColumns` order. */
export function flattenSecond(row: SecondRow): (string | number)[] {
  return [
    row.t_s,
    row.inflight,
    row.queued,
    row.limit,
    row.configured_limit,
    row.queue_depth,
    row.adapt_state,
    row.arrivals,
    row.completed,
    row.good,
    row.ttft_p50_ms,
    row.ttft_p95_ms,
    row.e2e_p50_ms,
    row.e2e_p95_ms,
    ...DECISION_REASONS.map((r) => row.decisions[r] ?? 0),
    ...row.endpoints.flatMap((e) => [e.running, e.waiting, e.kv_usage]),
  ];
}

/** Rows buffered before they are written in one go. */
const BATCH_ROWS = 4096;

/**
 * One CSV field per RFC 4180: quoted when it holds a comma, a quote or a line
 * break; booleans as true/false. (csv-stringify formats report exports; this
 * hot path writes millions of simple rows and is checked against it in tests.)
 */
export function csvField(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV line (with its newline). */
export function csvLine(row: readonly unknown[]): string {
  let out = '';
  for (let i = 0; i < row.length; i++) out += (i === 0 ? '' : ',') + csvField(row[i]);
  return `${out}\n`;
}

/** A CSV file written in batches of lines. */
class CsvFile {
  readonly #out: WriteStream;
  #buf: string[] = [];
  constructor(path: string, columns: readonly string[]) {
    this.#out = createWriteStream(path);
    this.#buf.push(csvLine(columns));
  }
  push(row: readonly unknown[]): void {
    this.#buf.push(csvLine(row));
    if (this.#buf.length >= BATCH_ROWS) this.#write();
  }
  #write(): void {
    if (this.#buf.length === 0) return;
    this.#out.write(this.#buf.join(''));
    this.#buf = [];
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
    this.#requests.push(REQUEST_COLUMNS.map((c) => r[c]));
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
