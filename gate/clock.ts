/**
 * The Clock port: the only way the gate learns the time or asks to be called
 * back later. The simulator implements it on its virtual clock, the proxy on
 * the real one; `ManualClock` is a pure implementation for tests and benchmarks.
 */

/** Time and periodic callbacks, supplied by the host. */
export interface Clock {
  /** Current time in milliseconds; never decreases. */
  now(): number;
  /**
   * Calls `fn` every `periodMs` milliseconds, first at now + periodMs.
   * @returns a function that cancels the callback.
   */
  every(periodMs: number, fn: () => void): () => void;
}

interface ManualTimer {
  at: number;
  periodMs: number;
  fn: () => void;
  seq: number;
  live: boolean;
}

/** A clock advanced by hand: `advance(ms)` fires due callbacks in time order. */
export class ManualClock implements Clock {
  #now: number;
  #timers: ManualTimer[] = [];
  #seq = 0;

  /** @param startMs the initial time in milliseconds */
  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  every(periodMs: number, fn: () => void): () => void {
    if (!(periodMs > 0)) throw new RangeError(`periodMs: ${periodMs} must be above 0`);
    const t: ManualTimer = { at: this.#now + periodMs, periodMs, fn, seq: this.#seq++, live: true };
    this.#timers.push(t);
    return () => {
      t.live = false;
    };
  }

  /** Moves time forward by `ms`, running every callback that falls due on the way, in (time, creation) order. */
  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }

  /** Moves time forward to `t` (ms), running due callbacks on the way. */
  advanceTo(t: number): void {
    if (t < this.#now) throw new RangeError(`advanceTo(${t}) is before now (${this.#now})`);
    for (;;) {
      this.#timers = this.#timers.filter((x) => x.live);
      let next: ManualTimer | undefined;
      for (const x of this.#timers) {
        if (x.at <= t && (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      }
      if (!next) break;
      this.#now = next.at;
      next.at += next.periodMs;
      next.fn();
    }
    this.#now = t;
  }
}
