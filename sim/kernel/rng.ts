/**
 * Seeded random streams.
 *
 * Every random source in a run (arrivals, prompt lengths, step jitter, ...) draws from its own
 * stream, derived from the run seed and the source's name. Adding draws to one stream never
 * shifts another, so a scenario change in one place does not reshuffle the rest of the run.
 * Streams use seedrandom's ARC4 generator keyed by `"<seed>/<name>"` (drawn through
 * {@link Arc4Stream}, which gives the same numbers without allocating).
 */
import seedrandom from 'seedrandom';
import { Arc4Stream } from './arc4.js';

/** Parameters of a lognormal distribution: ln X ~ Normal(mu, sigma). */
export interface LognormalParams {
  mu: number;
  sigma: number;
}

/** z-score of the 95th percentile of the standard normal. */
const Z95 = 1.6448536269514722;

/** A generator of uniforms in [0, 1). */
export interface UniformSource {
  double(): number;
}

/** One independent, reproducible stream of random numbers. */
export class Rng {
  /**
   * An object with a method rather than a closure: V8 inlines `this.#src.double()` into the
   * draws, where a call through a closure field returned each double boxed (a heap number per
   * uniform, about 3 % of bench:sim's bytes allocated).
   */
  readonly #src: UniformSource;

  constructor(src: UniformSource) {
    this.#src = src;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.#src.double();
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.#src.double();
  }

  /**
   * Exponential with the given rate (mean 1/rate), by inversion.
   * @param rate events per unit of the returned value (e.g. per ms to get ms)
   */
  exponential(rate: number): number {
    if (!(rate > 0)) throw new RangeError(`Expected rate > 0, got ${rate}`);
    return -Math.log(1 - this.#src.double()) / rate;
  }

  /** Normal by Box–Muller (two uniforms per draw; the sine partner is discarded). */
  normal(mean = 0, sd = 1): number {
    const u1 = 1 - this.#src.double();
    const u2 = this.#src.double();
    return mean + sd * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** Lognormal: exp(Normal(mu, sigma)). */
  lognormal(mu: number, sigma: number): number {
    return Math.exp(this.normal(mu, sigma));
  }

  /**
   * Poisson with mean `lambda`: Knuth's product method below 30, Hörmann's PTRS
   * (transformed rejection with squeeze) above.
   */
  poisson(lambda: number): number {
    if (!(lambda >= 0)) throw new RangeError(`Expected lambda >= 0, got ${lambda}`);
    if (lambda === 0) return 0;
    if (lambda < 30) {
      const limit = Math.exp(-lambda);
      let k = 0;
      let p = this.#src.double();
      while (p > limit) {
        k++;
        p *= this.#src.double();
      }
      return k;
    }
    const slam = Math.sqrt(lambda);
    const logLam = Math.log(lambda);
    const b = 0.931 + 2.53 * slam;
    const a = -0.059 + 0.02483 * b;
    const invAlpha = 1.1239 + 1.1328 / (b - 3.4);
    const vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const u = this.#src.double() - 0.5;
      const v = this.#src.double();
      const us = 0.5 - Math.abs(u);
      const k = Math.floor(((2 * a) / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      const lhs = Math.log(v) + Math.log(invAlpha) - Math.log(a / (us * us) + b);
      if (lhs <= -lambda + k * logLam - logGamma(k + 1)) return k;
    }
  }

  /** Integer uniform in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) {
      throw new RangeError(`Expected integers lo <= hi, got ${lo}, ${hi}`);
    }
    return lo + Math.floor(this.#src.double() * (hi - lo + 1));
  }

  /**
   * Index chosen with probability proportional to its weight.
   * @throws RangeError if no weight is positive or any is negative
   */
  pick(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) {
      if (!(w >= 0)) throw new RangeError(`Expected weights >= 0, got ${w}`);
      total += w;
    }
    if (!(total > 0)) throw new RangeError('Expected at least one positive weight');
    let r = this.#src.double() * total;
    let last = 0;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i] as number;
      if (w > 0) {
        last = i;
        if (r < w) return i;
        r -= w;
      }
    }
    return last;
  }
}

/**
 * The stream named `name` under run seed `seed`. The same (seed, name) always gives the same
 * sequence; different names give independent sequences.
 */
export function rngStream(seed: string | number, name: string): Rng {
  return new Rng(new Arc4Stream(seedrandom(`${seed}/${name}`, { state: true }).state()));
}

/** The uniforms of {@link rngStream}`(seed, name)` as a bare function, for the hottest draws. */
export function uniformStream(seed: string | number, name: string): () => number {
  const stream = new Arc4Stream(seedrandom(`${seed}/${name}`, { state: true }).state());
  return () => stream.double();
}

/** Lognormal parameters with the given median and 95th percentile (p95 > median > 0). */
export function lognormalFromMedianP95(median: number, p95: number): LognormalParams {
  if (!(median > 0) || !(p95 > median)) {
    throw new RangeError(`Expected 0 < median < p95, got median ${median}, p95 ${p95}`);
  }
  return { mu: Math.log(median), sigma: Math.log(p95 / median) / Z95 };
}

/** Lognormal parameters with the given mean and coefficient of variation (sd / mean). */
export function lognormalFromMeanCv(mean: number, cv: number): LognormalParams {
  if (!(mean > 0) || !(cv >= 0)) throw new RangeError(`Expected mean > 0, cv >= 0, got ${mean}, ${cv}`);
  const sigma2 = Math.log(1 + cv * cv);
  return { mu: Math.log(mean) - sigma2 / 2, sigma: Math.sqrt(sigma2) };
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7; relative error below 1e-13). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let s = LANCZOS[0] as number;
  for (let i = 1; i < 9; i++) s += (LANCZOS[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(s);
}
