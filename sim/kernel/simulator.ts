/**
 * The discrete-event loop: a virtual clock driven by {@link EventQueue}s.
 *
 * Time is kept in integer microseconds (see `clock.ts`); the public API takes and returns
 * milliseconds, rounded to the nearest microsecond. Events run in (time, insertion order), so
 * a run is a pure function of what was scheduled. The simulator never reads a wall clock.
 *
 * Pending events are kept in two heaps with one insertion counter: events due within
 * {@link FAR_US} of the time they were scheduled (engine steps, arrivals) and the rest
 * (client deadlines, most of them cancelled long before they are due, and periodic work).
 * The near heap stays small, so the events that come and go all the time sift through few
 * levels; the next event is the earlier of the two heads by (time, insertion order), so the
 * order is exactly that of one queue.
 *
 * Recurring timers ({@link Simulator.timer}, an engine's next step) live in a {@link TimerSet}
 * beside the heaps. At one instant, heap events run first (in insertion order) and a timer
 * runs only when no heap event is due at that instant; timers due together run in the order
 * they were created. This order does not depend on when a timer was set, which lets a host
 * that keeps a timer for the last of several steps (see `engine/sim-host.ts`) tell, from
 * {@link Simulator.timerHasRunNow}, whether a step it skipped would have run by now.
 */
import type { Clock } from './clock.js';
import { msToUs, usToMs } from './clock.js';
import type { EventCallback, EventHandle, PoppedEvent } from './event-queue.js';
import { EventQueue } from './event-queue.js';
import { TimerSet } from './timer-set.js';

export type { EventHandle } from './event-queue.js';

/** A recurring timer: one callback, pending at most once (see {@link Simulator.timer}). */
export interface SimTimer {
  /**
   * Sets the timer to fire at `atMs`, replacing its pending time; it runs in the order a
   * `schedule` at this point would give it.
   * @throws RangeError if `atMs` is earlier than now (after rounding to µs)
   */
  set(atMs: number): void;
  /** Stops the timer. @returns whether it was pending */
  clear(): boolean;
  /** Whether the timer is set and has not fired yet. */
  readonly pending: boolean;
  /** Its place among timers due at the same instant (creation order). */
  readonly index: number;
}

/**
 * The error for a time earlier than now (built apart from the hot callers, which stay small
 * enough for the compiler to inline).
 */
function beforeNow(atMs: number, nowMs: number): RangeError {
  return new RangeError(`Cannot schedule at ${atMs} ms: it is before now (${nowMs} ms)`);
}

/** Events scheduled at least this far ahead (µs) go to the far heap. */
const FAR_US = 1_000_000;

export class Simulator implements Clock {
  readonly #near = new EventQueue();
  readonly #far = new EventQueue();
  readonly #timers = new TimerSet();
  /** Insertion counter over both heaps. */
  #nextSeq = 0;
  readonly #popped: PoppedEvent = EventQueue.poppedEvent();
  #nowUs = 0;
  /** `#nowUs` in ms, kept beside it: read several times per event, divided once. */
  #nowMs = 0;
  #stopped = false;
  #running = false;
  #eventCount = 0;
  /** The instant (µs) of the last timer run, and the highest timer index run at that instant. */
  #timerRunUs = -1;
  #timerRunMax = -1;

  /**
   * @param startMs initial time in milliseconds
   * @default 0
   */
  constructor(startMs = 0) {
    this.#nowUs = msToUs(startMs);
    this.#nowMs = usToMs(this.#nowUs);
  }

  /** Current virtual time in milliseconds (fractional at µs resolution). */
  now(): number {
    return this.#nowMs;
  }

  /** Current virtual time in integer microseconds. */
  nowUs(): number {
    return this.#nowUs;
  }

  /** Events run so far, over all calls to {@link run}, including those {@link countInline}. */
  get eventCount(): number {
    return this.#eventCount;
  }

  /**
   * Counts `n` events a host ran inline, without the queue (engine steps it ran ahead of its
   * timer), so that {@link eventCount} is the model's count of events.
   */
  countInline(n: number): void {
    this.#eventCount += n;
  }

  /**
   * Whether timer `index` (see {@link SimTimer.index}), had it been due now, would already
   * have run: a timer of index >= `index` has run at this instant. Timers due together run in
   * index order once no heap event is due, so this holds exactly when it would have.
   */
  timerHasRunNow(index: number): boolean {
    return this.#timerRunUs === this.#nowUs && this.#timerRunMax >= index;
  }

  /** Events scheduled and not yet run or cancelled. */
  get pendingCount(): number {
    return this.#near.size + this.#far.size + this.#timers.pending;
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
    if (atUs < this.#nowUs) throw beforeNow(atMs, this.now());
    return this.#push(atUs, fn, arg as A);
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
    return this.#push(this.#nowUs + delayUs, fn, arg as A);
  }

  /**
   * Adds an event at `atUs` (>= now) to the heap for its distance. A far event's handle is
   * negative: -(its far-heap handle) - 1.
   */
  #push<A>(atUs: number, fn: EventCallback<A>, arg: A): EventHandle {
    const seq = this.#nextSeq++;
    if (atUs - this.#nowUs < FAR_US) return this.#near.pushWithSeq(atUs, seq, fn, arg);
    return -this.#far.pushWithSeq(atUs, seq, fn, arg) - 1;
  }

  /**
   * A timer that calls `fn` each time it fires, set and cleared at will: for a host that has
   * one thing pending at a time, again and again (an engine's next step). Cheaper than an
   * event per firing. It runs after the heap events due at the same instant (see above).
   */
  timer(fn: () => void): SimTimer {
    const timers = this.#timers;
    const i = timers.add(fn);
    const sim = this;
    return {
      set(atMs: number): void {
        const atUs = msToUs(atMs);
        if (atUs < sim.#nowUs) throw beforeNow(atMs, sim.now());
        timers.set(i, atUs);
      },
      clear: () => timers.clear(i),
      get pending() {
        return timers.isPending(i);
      },
      index: i,
    };
  }

  /**
   * Cancels a scheduled event.
   * @returns true if it was pending; false if it already ran or was cancelled
   */
  cancel(handle: EventHandle): boolean {
    return handle >= 0 ? this.#near.cancel(handle) : this.#far.cancel(-handle - 1);
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
      handle = this.#push(this.#nowUs + periodUs, tick, undefined);
      fn();
    };
    handle = this.#push(this.#nowUs + periodUs, tick, undefined);
    return () => {
      if (cancelled) return;
      cancelled = true;
      this.cancel(handle);
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
    const near = this.#near;
    const far = this.#far;
    const timers = this.#timers;
    const ev = this.#popped;
    let count = 0;
    this.#stopped = false;
    this.#running = true;
    try {
      while (!this.#stopped) {
        // The earlier head by (time, seq); seqs are unique, so a tie in time is decided by them.
        const nt = near.peekTime();
        const ft = far.peekTime();
        const queue =
          ft < nt || (ft === nt && ft !== Number.POSITIVE_INFINITY && far.peekSeq() < near.peekSeq())
            ? far
            : near;
        const ti = timers.first();
        if (ti >= 0) {
          const tt = timers.timeOf(ti);
          const qt = queue === far ? ft : nt;
          if (tt < qt) {
            if (tt > untilUs) break;
            if (tt !== this.#timerRunUs) {
              this.#timerRunUs = tt;
              this.#timerRunMax = ti;
            } else if (ti > this.#timerRunMax) {
              this.#timerRunMax = ti;
            }
            this.#nowUs = tt;
            this.#nowMs = usToMs(tt);
            count++;
            timers.fire(ti);
            continue;
          }
        }
        if (!queue.popUntil(untilUs, ev)) break;
        this.#nowUs = ev.time;
        this.#nowMs = usToMs(ev.time);
        count++;
        ev.fn(ev.arg);
      }
    } finally {
      this.#running = false;
      this.#eventCount += count;
    }
    if (!this.#stopped && untilUs !== Number.POSITIVE_INFINITY && untilUs > this.#nowUs) {
      this.#nowUs = untilUs;
      this.#nowMs = usToMs(untilUs);
    }
    return count;
  }

  /** Makes the current {@link run} return after the event being processed. */
  stop(): void {
    this.#stopped = true;
  }
}
