/**
 * Bounded-memory quantiles of times in ms: log-spaced buckets (each 1.25× the last, from 1 ms to
 * past a day), so p50/p95 are upper bounds of their bucket (at most 25 % above the true value)
 * while the count, sum and maximum are exact.
 */

const GROWTH = 1.25;
/** Upper bounds of the buckets, ms: 0 (exact zero), then 1, 1.25, 1.5625, … past 86,400,000. */
export const AGE_BOUNDS_MS: readonly number[] = (() => {
  const b = [0];
  for (let x = 1; x <= 86_400_000 * GROWTH; x *= GROWTH) b.push(x);
  return Object.freeze(b);
})();
const LN_GROWTH = Math.log(GROWTH);

/** Times in ms (queue ages, durations) with exact count, sum and max and bucketed quantiles. */
export class AgeHistogram {
  readonly #counts = new Array<number>(AGE_BOUNDS_MS.length + 1).fill(0);
  count = 0;
  sumMs = 0;
  maxMs = 0;

  note(ms: number): void {
    const v = Math.max(0, ms) || 0;
    this.count++;
    this.sumMs += v;
    if (v > this.maxMs) this.maxMs = v;
    let i = v === 0 ? 0 : v <= 1 ? 1 : 1 + Math.ceil(Math.log(v) / LN_GROWTH - 1e-9);
    if (i >= this.#counts.length) i = this.#counts.length - 1;
    this.#counts[i]!++;
  }

  /** The `q` quantile (0 < q ≤ 1) as its bucket's upper bound, never above the maximum; 0 when empty. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let cum = 0;
    for (let i = 0; i < this.#counts.length; i++) {
      cum += this.#counts[i]!;
      if (cum >= rank) return Math.min(AGE_BOUNDS_MS[i] ?? this.maxMs, this.maxMs);
    }
    return this.maxMs;
  }
}
