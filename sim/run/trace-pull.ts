/**
 * A replayed trace pulled ahead of the simulator's clock: records are read from the file only as
 * far as the run is about to go, each scheduled at its send time, so memory stays bounded by the
 * stretch ahead, not the trace's length.
 */
import type { TraceFormatError } from '../clients/errors.js';
import { traceSendAtMs } from '../clients/schedule.js';
import { readTrace } from '../clients/trace-files.js';
import type { TraceRecord } from '../clients/trace-parse.js';
import { spreadQuantised } from '../clients/trace-replay.js';
import { uniformStream } from '../kernel/rng.js';
import type { Simulator } from '../kernel/simulator.js';
import type { TraceReplayConfig } from '../scenario/client-config.js';

/** The trace replay of a run (or none). */
export class TracePull {
  readonly #sim: Simulator;
  readonly #tr: TraceReplayConfig | undefined;
  readonly #trace: AsyncIterator<TraceRecord> | null;
  readonly #endMs: number;
  readonly #send: (rec: TraceRecord) => void;
  #count = 0;
  /** True once the trace is exhausted, at its limit or past the run's end (at once without a trace). */
  done: boolean;
  /** Send time of the last record read, virtual ms. */
  horizonMs = 0;

  /**
   * @param tr the trace replay, or undefined for none
   * @param endMs records sent at or after this virtual time end the replay
   * @param send called at each record's send time
   * @param onBadLine skip unreadable lines, reporting each here (by default one fails the run)
   */
  constructor(
    sim: Simulator,
    tr: TraceReplayConfig | undefined,
    endMs: number,
    send: (rec: TraceRecord) => void,
    seed: string | number,
    onBadLine?: (err: TraceFormatError) => void,
  ) {
    this.#sim = sim;
    this.#tr = tr;
    this.#endMs = endMs;
    this.#send = send;
    this.#trace = tr ? replayedTrace(tr, seed, onBadLine)[Symbol.asyncIterator]() : null;
    this.done = this.#trace === null;
  }

  /** Stops reading the trace and closes its file (idempotent); a run calls it when it ends. */
  async close(): Promise<void> {
    this.done = true;
    await this.#trace?.return?.(undefined);
  }

  /** Reads and schedules records until one is sent at or after `untilMs` (virtual ms), or the replay ends. */
  async pull(untilMs: number): Promise<void> {
    const tr = this.#tr;
    const trace = this.#trace;
    if (!tr || !trace) return;
    const sim = this.#sim;
    while (!this.done && this.horizonMs < untilMs) {
      const n = await trace.next();
      if (n.done || (tr.limit !== undefined && this.#count >= tr.limit)) {
        this.done = true;
        break;
      }
      this.#count++;
      const rec = n.value;
      const at = traceSendAtMs(tr, rec);
      this.horizonMs = at;
      if (at >= this.#endMs) {
        this.done = true;
        break;
      }
      sim.schedule(Math.max(at, sim.now()), () => this.#send(rec));
    }
  }
}

/**
 * The trace's records as replayed: read from the file, and with `spread_quantised_ms` the records
 * sharing a quantised timestamp spread over the bucket after it, by the seed's `trace.spread`
 * stream (the same seed, the same times).
 */
export function replayedTrace(
  tr: TraceReplayConfig,
  seed: string | number,
  onBadLine?: (err: TraceFormatError) => void,
  limit?: number,
): AsyncIterable<TraceRecord> {
  const records = readTrace(tr.path, {
    format: tr.format,
    ...(onBadLine ? { skipBadLines: true, onBadLine } : {}),
    ...(limit === undefined ? {} : { limit }),
  });
  return tr.spreadQuantisedMs === undefined
    ? records
    : spreadQuantised(records, tr.spreadQuantisedMs, uniformStream(seed, 'trace.spread'));
}
