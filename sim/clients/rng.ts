/**
 * Random-number plumbing for the client models.
 *
 * Nothing here owns a seed: every sampler takes a {@link RandomFn} from the caller (the kernel derives one
 * seeded stream per random source), so a run is a function of (scenario, seed). From the kernel's
 * streams: `(name) => uniformStream(seed, name)`.
 */

/** A uniform random source on [0, 1), e.g. a `seedrandom` generator. */
export type RandomFn = () => number;

/** Named RNG streams: returns the stream for a random source, the same stream for the same name. */
export type RandomStreams = (name: string) => RandomFn;

/** Uniform draw on [min, max). One RNG draw. */
export function uniform(rng: RandomFn, min: number, max: number): number {
  return min + (max - min) * rng();
}

/**
 * Exponential draw with the given mean (any unit; the result has the same unit). One RNG draw,
 * by inversion: `-mean * ln(1 - u)`, finite because u < 1.
 */
export function exponential(rng: RandomFn, mean: number): number {
  return -mean * Math.log(1 - rng());
}

// Acklam's rational approximation of the inverse standard normal CDF (relative error < 1.2e-9),
// its coefficients as separate constants so that a call allocates nothing.
const A0 = -39.69683028665376;
const A1 = 220.9460984245205;
const A2 = -275.9285104469687;
const A3 = 138.357751867269;
const A4 = -30.66479806614716;
const A5 = 2.506628277459239;
const B0 = -54.47609879822406;
const B1 = 161.5858368580409;
const B2 = -155.6989798598866;
const B3 = 66.80131188771972;
const B4 = -13.28068155288572;
const C0 = -0.007784894002430293;
const C1 = -0.3223964580411365;
const C2 = -2.400758277161838;
const C3 = -2.549732539343734;
const C4 = 4.374664141464968;
const C5 = 2.938163982698783;
const D0 = 0.007784695709041462;
const D1 = 0.3224671290700398;
const D2 = 2.445134137142996;
const D3 = 3.754408661907416;
const P_LOW = 0.02425;

/**
 * Inverse of the standard normal CDF: the z with Φ(z) = p. Defined for 0 < p < 1; p is nudged into
 * [1e-16, 1 - 1e-16] so a draw of exactly 0 stays finite.
 */
export function normalQuantile(p: number): number {
  const q0 = Math.min(Math.max(p, 1e-16), 1 - 1e-16);
  // The tails (one draw in 20) in a function of their own keep this one small enough to be
  // inlined where it is called: a call that is not returns its double as a heap number.
  if (q0 < P_LOW || q0 > 1 - P_LOW) return normalTail(q0);
  const q = q0 - 0.5;
  const r = q * q;
  return (
    ((((((A0 * r + A1) * r + A2) * r + A3) * r + A4) * r + A5) * q) /
    (((((B0 * r + B1) * r + B2) * r + B3) * r + B4) * r + 1)
  );
}

/** {@link normalQuantile} below `P_LOW` or above `1 - P_LOW`. */
function normalTail(q0: number): number {
  if (q0 < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(q0));
    return (
      (((((C0 * q + C1) * q + C2) * q + C3) * q + C4) * q + C5) /
      ((((D0 * q + D1) * q + D2) * q + D3) * q + 1)
    );
  }
  const q = Math.sqrt(-2 * Math.log(1 - q0));
  return (
    -(((((C0 * q + C1) * q + C2) * q + C3) * q + C4) * q + C5) / ((((D0 * q + D1) * q + D2) * q + D3) * q + 1)
  );
}

/** Standard normal draw by inversion. One RNG draw. */
export function standardNormal(rng: RandomFn): number {
  return normalQuantile(rng());
}

/** Bernoulli trial: true with probability `p` (clamped to [0, 1]). One RNG draw. */
export function chance(rng: RandomFn, p: number): boolean {
  return rng() < p;
}

/**
 * Index drawn in proportion to `cumulative` weights (a non-decreasing array whose last element is the
 * total, > 0). One RNG draw; binary search.
 */
export function pickCumulative(rng: RandomFn, cumulative: readonly number[]): number {
  const total = cumulative[cumulative.length - 1] ?? 0;
  const x = rng() * total;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cumulative[mid] ?? 0) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Running sums of `weights`: `[w0, w0 + w1, ...]`. */
export function cumulativeSums(weights: readonly number[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const w of weights) {
    sum += w;
    out.push(sum);
  }
  return out;
}
