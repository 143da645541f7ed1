/**
 * A pool's counters: decisions by reason, observe-mode would-be refusals by
 * ceiling, the queue-wait histogram, and the recent waits behind Retry-After.
 * The pool's admission and queue service write them; metrics and refusals
 * read them. Nothing here decides anything.
 */
import { type Ceiling, DECISION_REASONS, type DecisionReason, REASON_INDEX } from './decisions.js';

/** Waits (ms) the Retry-After mean covers: the last this many requests to leave the queue admitted or timed out. */
export const RETRY_MEAN_WAITS = 64;

/** Queue-wait histogram bucket bounds, in ms. */
export const QUEUE_WAIT_BUCKETS_MS = [10, 50, 100, 250, 500, 1000, 2500, 5000] as const;

/** A ceiling an observe-mode request can be counted against. */
export type ObservedCeiling = Exclude<Ceiling, 'none' | 'queue'>;

/** Per-ceiling counts of observe-mode would-be refusals. */
export type ObserveCounts = Record<ObservedCeiling, { shed: number; queue: number }>;

export class PoolTelemetry {
  /** Decisions by reason, indexed by {@link REASON_INDEX}. */
  readonly decisions = new Array<number>(DECISION_REASONS.length).fill(0);
  readonly observeCounts: ObserveCounts = {
    service: { shed: 0, queue: 0 },
    endpoint: { shed: 0, queue: 0 },
    tenant: { shed: 0, queue: 0 },
  };
  /** Waits of requests that left the queue admitted, by {@link QUEUE_WAIT_BUCKETS_MS} (one overflow bucket). */
  readonly queueWaitBuckets = new Array<number>(QUEUE_WAIT_BUCKETS_MS.length + 1).fill(0);
  /** Sum (ms) and count of those waits. */
  queueWaitSumMs = 0;
  queueWaitCount = 0;
  /** The last {@link RETRY_MEAN_WAITS} waits that ended admitted or timed out (a ring), and their sum. */
  readonly #recentWaits = new Float64Array(RETRY_MEAN_WAITS);
  #recentNext = 0;
  #recentCount = 0;
  #recentSumMs = 0;

  /** Counts one decision. */
  count(reason: DecisionReason): void {
    this.decisions[REASON_INDEX[reason]]!++;
  }

  /** Counts one observe-mode would-be refusal against ceiling `c` (a decision and a per-ceiling count). */
  countObserved(outcome: 'observe_would_shed' | 'observe_would_queue', c: ObservedCeiling): void {
    this.count(outcome);
    const oc = this.observeCounts[c];
    if (outcome === 'observe_would_queue') oc.queue++;
    else oc.shed++;
  }

  /**
   * The mean wait behind a full queue's or a timeout's Retry-After, in ms: over the last
   * {@link RETRY_MEAN_WAITS} requests to leave the queue admitted or timed out (cancelled and
   * drained waits say nothing of how long a turn takes). NaN when nobody has left yet.
   */
  get meanQueueWaitMs(): number {
    return this.#recentCount === 0 ? Number.NaN : this.#recentSumMs / this.#recentCount;
  }

  /** A wait (ms) that ended in a timeout: it counts in the Retry-After mean only. */
  noteWait(ms: number): void {
    const i = this.#recentNext;
    if (this.#recentCount === RETRY_MEAN_WAITS) this.#recentSumMs -= this.#recentWaits[i]!;
    else this.#recentCount++;
    this.#recentWaits[i] = ms;
    this.#recentSumMs += ms;
    this.#recentNext = i + 1 === RETRY_MEAN_WAITS ? 0 : i + 1;
  }

  /** A wait (ms) that ended admitted: the Retry-After mean and the histogram. */
  recordWait(ms: number): void {
    this.noteWait(ms);
    this.queueWaitSumMs += ms;
    this.queueWaitCount++;
    let i = 0;
    while (i < QUEUE_WAIT_BUCKETS_MS.length && ms > QUEUE_WAIT_BUCKETS_MS[i]!) i++;
    this.queueWaitBuckets[i]!++;
  }
}
