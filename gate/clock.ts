/**
 * The Clock port: the only way the gate learns the time or asks to be called
 * back later. The simulator implements it on its virtual clock, the proxy on
 * the real one; `ManualClock` is a pure implementation for tests and benchmarks.
 */

/** A one-shot timer that can be set again and again (one per pool: its earliest queue deadline). */
export interface ClockTimer {
  /**
   * Makes the timer fire once at `atMs` (never earlier), replacing any pending time.
   * A time in the past fires as soon as the host can.
   */
  set(atMs: number): void;
  /** Cancels the pending firing, if any; harmless when none is pending. */
  clear(): void;
}

/** Time and callbacks, supplied by the host. */
export interface Clock {
  /** Current time in milliseconds; never decreases. */
  now(): number;
  /**
   * Calls `fn` every `periodMs` milliseconds, first at now + periodMs.
   * @returns a function that cancels the callback.
   */
  every(periodMs: number, fn: () => void): () => void;
  /** A one-shot timer calling `fn` each time it fires; idle until set. */
  timer(fn: () => void): ClockTimer;
}

interface ManualTimer {
  at: number;
  /** 0 for a one-shot timer. */
  periodMs: number;
  fn: () => void;
  seq: number;
  live: boolean;
}

/** A clock advanced by hand: `advance(ms)` fires due callbacks in time order. */
export class ManualClock implements Clock {
  #now: number;
  readonly #timers = new Set<ManualTimer>();
  #seq = 0;

  /** @param startMs the initial time in milliseconds */
  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Timers and periodic callbacks pending (for tests of how many a host is asked to keep). */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  every(periodMs: number, fn: () => void): () => void {
    if (!(periodMs > 0)) throw new RangeError(`periodMs: ${periodMs} must be above 0`);
    const t: ManualTimer = { at: this.#now + periodMs, periodMs, fn, seq: this.#seq++, live: true };
    this.#timers.add(t);
    return () => {
      t.live = false;
      this.#timers.delete(t);
    };
  }

  timer(fn: () => void): ClockTimer {
    const t: ManualTimer = { at: 0, periodMs: 0, fn, seq: 0, live: false };
    return {
      set: (atMs: number): void => {
        this.#timers.add(t);
        t.at = Math.max(atMs, this.#now);
        t.seq = this.#seq++;
        t.live = true;
      },
      clear: (): void => {
        t.live = false;
        this.#timers.delete(t);
      },
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
      let next: ManualTimer | undefined;
      for (const x of this.#timers) {
        if (x.at <= t && (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      }
      if (!next) break;
      this.#now = next.at;
      if (next.periodMs > 0) next.at += next.periodMs;
      else {
        next.live = false;
        this.#timers.delete(next);
      }
      next.fn();
    }
    this.#now = t;
  }
}
