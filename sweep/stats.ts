/**
 * The statistics of a sweep: means across seeds and Student-t confidence
 * intervals. Pure and deterministic: the same inputs in the same order give
 * the same bits.
 */

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

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; ~15 significant digits). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaCf(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaCf(a, b, x)) / a : 1 - (front * betaCf(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * The two-sided critical value of Student's t: the t with P(|T| <= t) = `level`
 * (12.706 for df 1 at 95%, 4.303 for df 2, 1.96 as df grows). Found by bisection.
 */
export function studentTCritical(df: number, level = 0.95): number {
  if (!(df >= 1)) throw new RangeError(`degrees of freedom must be at least 1, got ${df}`);
  const target = 1 - (1 - level) / 2;
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < target) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
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
