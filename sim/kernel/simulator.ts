/**
 * The discrete-event loop: a virtual clock driven by an {@link EventQueue}.
 *
 * Time is kept in integer microseconds (see `clock.ts`); the public API takes and returns
 * milliseconds, rounded to the nearest microsecond. Events run in (time, insertion order), so
 * a run is a pure function of what was scheduled. The simulator never reads a wall clock.
 */
import type { Clock } from './clock.js';
import { msToUs, usToMs } from './clock.js';
import type { EventCallback, EventHandle, PoppedEvent } from './event-queue.js';
import { EventQueue } from './event-queue.js';

export type { EventHandle } from './event-queue.js';

export class Simulator implements Clock {
  readonly #queue = new EventQueue();
  readonly #popped: PoppedEvent = EventQueue.poppedEvent();
  #nowUs = 0;
  #stopped = false;
  #running = false;
  #eventCount = 0;

  /**
   * @param startMs initial time in milliseconds
   * @default 0
   */
  constructor(startMs = 0) {
    this.#nowUs = msToUs(startMs);
  }

  /** Current virtual time in milliseconds (fractional at µs resolution). */
  now(): number {
    return usToMs(this.#nowUs);
  }

  /** Current virtual time in integer microseconds. */
  nowUs(): number {
    return this.#nowUs;
  }

  /** Events run so far, over all calls to {@link run}. */
  get eventCount(): number {
    return this.#eventCount;
  }

  /** Events scheduled and not yet run or cancelled. */
  get pendingCount(): number {
    return this.#queue.size;
  }

  /**
   * Schedules `fn(arg)` at absolute time `atMs`. Passing a shared function plus an argument
   * avoids allocating a closure per event.
   * @throws RangeError if `atMs` is earlier than now (after rounding to µs)
   */
  schedule(atMs: number, fn: () => void): EventHandle;
  schedule<A>(atMs: number, fn: EventCallback<A>, arg: A): EventHandle;
  schedule<A>(atMs: number, fn: EventCallback<A>, arg?: A): EventHandle {
    const atUs = msToUs(atMs);
    if (atUs < this.#nowUs) {
      throw new RangeError(`Cannot schedule at ${atMs} ms: it is before now (${this.now()} ms)`);
    }
    return this.#queue.push(atUs, fn, arg as A);
  }

  /**
   * Schedules `fn(arg)` `delayMs` milliseconds from now.
   * @throws RangeError if `delayMs` is negative or not finite
   */
  after(delayMs: number, fn: () => void): EventHandle;
  after<A>(delayMs: number, fn: EventCallback<A>, arg: A): EventHandle;
  after<A>(delayMs: number, fn: EventCallback<A>, arg?: A): EventHandle {
    const delayUs = msToUs(delayMs);
    if (delayUs < 0) throw new RangeError(`Expected a delay >= 0 ms, got ${delayMs}`);
    return this.#queue.push(this.#nowUs + delayUs, fn, arg as A);
  }

  /**
   * Cancels a scheduled event.
   * @returns true if it was pending; false if it already ran or was cancelled
   */
  cancel(handle: EventHandle): boolean {
    return this.#queue.cancel(handle);
  }

  /**
   * Calls `fn` every `periodMs` ms, first at now + `periodMs`.
   * @returns a cancel function (idempotent)
   * @throws RangeError if `periodMs` rounds to less than 1 µs
   */
  every(periodMs: number, fn: () => void): () => void {
    const periodUs = msToUs(periodMs);
    if (periodUs < 1) throw new RangeError(`Expected a period >= 0.001 ms, got ${periodMs}`);
    let cancelled = false;
    let handle: EventHandle;
    const tick = (): void => {
      handle = this.#queue.push(this.#nowUs + periodUs, tick, undefined);
      fn();
    };
    handle = this.#queue.push(this.#nowUs + periodUs, tick, undefined);
    return () => {
      if (cancelled) return;
      cancelled = true;
      this.#queue.cancel(handle);
    };
  }

  /**
   * Runs events in order until none is left, the next one is later than `untilMs`, or
   * {@link stop} is called. Events at exactly `untilMs` run. When the run ends by reaching
   * `untilMs`, the clock is advanced to `untilMs`.
   * @param untilMs last time to run, in ms
   * @default Infinity
   * @returns number of events run by this call
   */
  run(untilMs = Number.POSITIVE_INFINITY): number {
    if (this.#running) throw new Error('Simulator.run() is not re-entrant');
    const untilUs = untilMs === Number.POSITIVE_INFINITY ? untilMs : msToUs(untilMs);
    const queue = this.#queue;
    const ev = this.#popped;
    let count = 0;
    this.#stopped = false;
    this.#running = true;
    try {
      while (!this.#stopped && queue.popUntil(untilUs, ev)) {
        this.#nowUs = ev.time;
        count++;
        ev.fn(ev.arg);
      }
    } finally {
      this.#running = false;
      this.#eventCount += count;
    }
    if (!this.#stopped && untilUs !== Number.POSITIVE_INFINITY && untilUs > this.#nowUs) {
      this.#nowUs = untilUs;
    }
    return count;
  }

  /** Makes the current {@link run} return after the event being processed. */
  stop(): void {
    this.#stopped = true;
  }
}
