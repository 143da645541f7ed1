/**
 * Where a run's outputs go: files in an out directory (per-request records
 * and the time series streamed as CSV, the summary as JSON), or memory for
 * tests and sweeps.
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Stringifier, stringify } from 'csv-stringify';
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

const CAST = { boolean: (v: boolean) => (v ? 'true' : 'false') };

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

/** Writes `requests.csv`, `timeseries.csv` and `summary.json` into `dir`. */
export class FileSink implements RunSink {
  readonly #requests: Stringifier;
  readonly #seconds: Stringifier;
  readonly #files: WriteStream[];

  constructor(
    readonly dir: string,
    endpointIds: readonly string[],
  ) {
    mkdirSync(dir, { recursive: true });
    const reqFile = createWriteStream(join(dir, 'requests.csv'));
    const secFile = createWriteStream(join(dir, 'timeseries.csv'));
    this.#requests = stringify({ header: true, columns: [...REQUEST_COLUMNS], cast: CAST });
    this.#seconds = stringify({ header: true, columns: secondColumns(endpointIds), cast: CAST });
    this.#requests.pipe(reqFile);
    this.#seconds.pipe(secFile);
    this.#files = [reqFile, secFile];
  }

  request(r: RequestRecord): void {
    this.#requests.write(REQUEST_COLUMNS.map((c) => r[c]));
  }

  second(row: SecondRow): void {
    this.#seconds.write(flattenSecond(row));
  }

  async flush(): Promise<void> {
    for (const s of [this.#requests, this.#seconds]) {
      if (s.writableNeedDrain) await once(s, 'drain');
    }
  }

  async close(summary: RunSummary): Promise<void> {
    this.#requests.end();
    this.#seconds.end();
    await Promise.all(this.#files.map((f) => once(f, 'close')));
    await writeFile(join(this.dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  }
}
