/**
 * Time in the simulator.
 *
 * The kernel keeps time as an integer number of **microseconds** so that an engine step of
 * 6.607 ms lands on an exact instant, sums of steps never drift, and two runs with the same
 * seed order their events identically. Integer µs fit exactly in a double up to 2^53 µs
 * (about 285 years of simulated time).
 *
 * The gate core sees time through the {@link Clock} port in **milliseconds**; `now()` is the
 * microsecond count divided by 1000, so it may be fractional (e.g. 6.607).
 */

/** The time port the gate core uses: declared once, in the gate (`gate/clock.ts`); the simulator implements it. */
export type { Clock, ClockTimer } from '../../gate/index.js';

/** Microseconds per millisecond. */
export const US_PER_MS = 1000;

/**
 * Converts milliseconds to whole microseconds, rounding to the nearest microsecond.
 * @throws RangeError if `ms` is not a finite number.
 */
export function msToUs(ms: number): number {
  if (!Number.isFinite(ms)) throw notFinite(ms);
  return Math.round(ms * US_PER_MS);
}

/** The error of {@link msToUs} (built apart, so that msToUs stays small enough to inline). */
function notFinite(ms: number): RangeError {
  return new RangeError(`Expected a finite time in ms, got ${ms}`);
}

/** Converts whole microseconds to (possibly fractional) milliseconds. */
export function usToMs(us: number): number {
  return us / US_PER_MS;
}

/** Rounds a time in ms to the clock's resolution (1 µs), as scheduling at it would. */
export function roundToUs(ms: number): number {
  return usToMs(msToUs(ms));
}
