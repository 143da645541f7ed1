/**
 * The statistics of a sweep: means across seeds and Student-t confidence
 * intervals. Pure and deterministic: the same inputs in the same order give
 * the same bits. Student's t comes from jStat.
 */
import { createRequire } from 'node:module';

/** Arithmetic mean; NaN for an empty list. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values. */
export function sampleStdDev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return Math.sqrt(ss / (xs.length - 1));
}

/** The part of jStat (no type declarations of its own) this file uses. */
interface JStat {
  studentt: { inv(p: number, dof: number): number; cdf(t: number, dof: number): number };
}

/** jStat, loaded on first use (a sweep's aggregation), not when any `sluice` command starts. */
const jStat = (): JStat => (createRequire(import.meta.url)('jstat') as { jStat: JStat }).jStat;

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  return jStat().studentt.cdf(t, df);
}

/**
 * The two-sided critical value of Student's t: the t with P(|T| <= t) = `level`
 * (12.706 for df 1 at 95%, 4.303 for df 2, 1.96 as df grows): jStat's quantile
 * of Student's t at 1 − (1 − level) / 2.
 */
export function studentTCritical(df: number, level = 0.95): number {
  if (!(df >= 1)) throw new RangeError(`degrees of freedom must be at least 1, got ${df}`);
  return jStat().studentt.inv(1 - (1 - level) / 2, df);
}

/** A mean with its confidence interval. */
export interface MeanCi {
  mean: number;
  low: number;
  high: number;
  /** Half-width of the interval. */
  halfWidth: number;
}

/**
 * The mean of `xs` with its Student-t confidence interval (default 95%):
 * mean ± t(n-1) · s / √n. With one value the interval is that value.
 */
export function confidenceInterval(xs: readonly number[], level = 0.95): MeanCi {
  const m = mean(xs);
  if (xs.length < 2) return { mean: m, low: m, high: m, halfWidth: 0 };
  const half = (studentTCritical(xs.length - 1, level) * sampleStdDev(xs)) / Math.sqrt(xs.length);
  return { mean: m, low: m - half, high: m + half, halfWidth: half };
}

/** Rounds to `digits` decimals (default 6) so printed and saved figures carry no float noise. */
export function roundTo(x: number, digits = 6): number {
  const f = 10 ** digits;
  const r = Math.round(x * f) / f;
  return Object.is(r, -0) ? 0 : r;
}
