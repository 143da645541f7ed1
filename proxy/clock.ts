/**
 * The gate's Clock port on the real clock: a monotonic `performance.now()`
 * and `setInterval` timers. Timers are unref'd, so they never keep a process
 * alive on their own (the listening sockets do).
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../gate/index.js';

/** A Clock on the process's monotonic clock (milliseconds since process start). */
export class RealClock implements Clock {
  readonly #timers = new Set<NodeJS.Timeout>();

  /** Current monotonic time in ms. */
  now(): number {
    return performance.now();
  }

  /** Calls `fn` every `periodMs` ms, first at now + periodMs. Returns a cancel function. */
  every(periodMs: number, fn: () => void): () => void {
    if (!(periodMs > 0)) throw new RangeError(`periodMs: ${periodMs} must be above 0`);
    const t = setInterval(fn, periodMs);
    t.unref();
    this.#timers.add(t);
    return () => {
      clearInterval(t);
      this.#timers.delete(t);
    };
  }

  /** Cancels every timer this clock started. */
  dispose(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#timers.clear();
  }
}
