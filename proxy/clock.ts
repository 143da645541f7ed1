/**
 * The gate's Clock port on the real clock: a monotonic `performance.now()`
 * and `setInterval` timers. Timers are unref'd, so they never keep a process
 * alive on their own (the listening sockets do).
 */
import type { Clock, ClockTimer } from '../gate/index.js';

/**
 * A Clock on the process's monotonic clock (milliseconds since process start), optionally
 * scaled: with `timeScale` X it counts X ms per real ms, and its timers run X times as often,
 * so that a gate behind a real proxy can live in the engine time of emulated engines run at
 * time scale X (a real run of a compressed or slowed-down scenario).
 */
export class RealClock implements Clock {
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Clock ms per real ms. */
  readonly timeScale: number;

  /** @param timeScale clock ms per real ms (> 0) @default 1 */
  constructor(timeScale = 1) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale))
      throw new RangeError(`time scale: ${timeScale} is not a finite number > 0`);
    this.timeScale = timeScale;
  }

  /** Current monotonic time in (clock) ms. */
  now(): number {
    return performance.now() * this.timeScale;
  }

  /** Calls `fn` every `periodMs` clock ms, first at now + periodMs. Returns a cancel function. */
  every(periodMs: number, fn: () => void): () => void {
    if (!(periodMs > 0)) throw new RangeError(`periodMs: ${periodMs} must be above 0`);
    const t = setInterval(fn, periodMs / this.timeScale);
    t.unref();
    this.#timers.add(t);
    return () => {
      clearInterval(t);
      this.#timers.delete(t);
    };
  }

  /**
   * A one-shot timer on `setTimeout`. Node may run a timeout up to a millisecond before
   * `performance.now()` reaches its time (libuv keeps a cached, whole-millisecond loop
   * time), so a firing that comes early waits out the rest: the callback never runs
   * before the time it was set for.
   */
  timer(fn: () => void): ClockTimer {
    let handle: NodeJS.Timeout | null = null;
    let atMs = 0;
    const stop = (): void => {
      if (handle === null) return;
      clearTimeout(handle);
      this.#timers.delete(handle);
      handle = null;
    };
    const start = (): void => {
      const waitMs = Math.max(0, Math.ceil((atMs - this.now()) / this.timeScale));
      handle = setTimeout(fire, waitMs);
      handle.unref();
      this.#timers.add(handle);
    };
    const fire = (): void => {
      if (handle !== null) this.#timers.delete(handle);
      handle = null;
      if (this.now() < atMs) start();
      else fn();
    };
    return {
      set: (at: number): void => {
        stop();
        atMs = at;
        start();
      },
      clear: stop,
    };
  }

  /** Cancels every timer this clock started. */
  dispose(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
