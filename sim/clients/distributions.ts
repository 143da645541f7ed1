/**
 * Value distributions for prompt tokens, output tokens and think times: fixed, uniform, exponential,
 * lognormal (by median and p95, or by mu and sigma) and empirical (a list of values, optionally
 * weighted, e.g. a trace's token counts). Every distribution clamps to an optional [min, max].
 */
import { ClientConfigError, requireNonNegative, requirePositive } from './errors.js';
import { cumulativeSums, exponential, normalQuantile, pickCumulative, type RandomFn } from './rng.js';

/** z of the 95th percentile of the standard normal distribution. */
export const Z_P95 = 1.6448536269514722;

/** Clamp shared by every distribution config. Bounds are in the distribution's unit. */
export interface ClampConfig {
  /** Lower bound applied after sampling (inclusive). Token distributions default to 1. */
  min?: number;
  /** Upper bound applied after sampling (inclusive). */
  max?: number;
}

/** Always `value`. */
export interface FixedDistributionConfig extends ClampConfig {
  kind: 'fixed';
  value: number;
}

/** Uniform on [low, high] (integers inclusive for token distributions). */
export interface UniformDistributionConfig extends ClampConfig {
  kind: 'uniform';
  low: number;
  high: number;
}

/** Exponential with the given mean (a Poisson user's think time). */
export interface ExponentialDistributionConfig extends ClampConfig {
  kind: 'exponential';
  mean: number;
}

/** Lognormal by its median and 95th percentile (p95 >= median > 0). */
export interface LognormalByQuantilesConfig extends ClampConfig {
  kind: 'lognormal';
  median: number;
  p95: number;
}

/** Lognormal by the mean `mu` and standard deviation `sigma` of the underlying normal. */
export interface LognormalByParamsConfig extends ClampConfig {
  kind: 'lognormal';
  mu: number;
  sigma: number;
}

/** A value drawn from `values`, uniformly or in proportion to `weights` (same length). */
export interface EmpiricalDistributionConfig extends ClampConfig {
  kind: 'empirical';
  values: readonly number[];
  weights?: readonly number[];
}

/** A plain distribution config, as found in a scenario file. */
export type DistributionConfig =
  | FixedDistributionConfig
  | UniformDistributionConfig
  | ExponentialDistributionConfig
  | LognormalByQuantilesConfig
  | LognormalByParamsConfig
  | EmpiricalDistributionConfig;

/** A sampler. Pure: the same RNG state gives the same value. Every kind makes exactly one RNG draw. */
export interface Distribution {
  /** One value, clamped to the config's [min, max]. */
  sample(rng: RandomFn): number;
  /** The median before clamping (exact for fixed, uniform, exponential, lognormal; empirical: lower median). */
  readonly median: number;
}

/** Options of {@link createDistribution}. */
export interface DistributionOptions {
  /** Round samples to whole numbers (token counts). Default false. */
  integer?: boolean;
  /** Dotted path of the config, for error messages. Default `distribution`. */
  field?: string;
}

/**
 * Builds a sampler from a plain config.
 * @throws ClientConfigError when a parameter is out of range.
 */
export function createDistribution(
  config: DistributionConfig,
  options: DistributionOptions = {},
): Distribution {
  const field = options.field ?? 'distribution';
  const integer = options.integer ?? false;
  const lo = config.min ?? Number.NEGATIVE_INFINITY;
  const hi = config.max ?? Number.POSITIVE_INFINITY;
  if (Number.isNaN(lo) || Number.isNaN(hi) || lo > hi) {
    throw new ClientConfigError(`${field}.max`, config.max, `>= min (${config.min})`);
  }
  const finish = (x: number): number => {
    const v = integer ? Math.round(x) : x;
    return Math.min(Math.max(v, lo), hi);
  };
  const raw = rawSampler(config, integer, field);
  return { sample: (rng) => finish(raw.sample(rng)), median: raw.median };
}

/**
 * A token-count sampler: integer samples, clamped to [max(1, min), max].
 * @throws ClientConfigError when a parameter is out of range.
 */
export function createTokenDistribution(config: DistributionConfig, field = 'tokens'): Distribution {
  return createDistribution({ ...config, min: Math.max(1, config.min ?? 1) }, { integer: true, field });
}

/** mu and sigma of the lognormal with the given median and 95th percentile. */
export function lognormalParams(median: number, p95: number): { mu: number; sigma: number } {
  const mu = Math.log(median);
  return { mu, sigma: (Math.log(p95) - mu) / Z_P95 };
}

function rawSampler(config: DistributionConfig, integer: boolean, field: string): Distribution {
  switch (config.kind) {
    case 'fixed': {
      const v = config.value;
      if (!Number.isFinite(v)) throw new ClientConfigError(`${field}.value`, v, 'a finite number');
      return {
        sample: (rng) => {
          rng();
          return v;
        },
        median: v,
      };
    }
    case 'uniform': {
      const { low, high } = config;
      if (!Number.isFinite(low)) throw new ClientConfigError(`${field}.low`, low, 'a finite number');
      if (!(Number.isFinite(high) && high >= low)) {
        throw new ClientConfigError(`${field}.high`, high, `a finite number >= low (${low})`);
      }
      if (integer) {
        const a = Math.ceil(low);
        const n = Math.floor(high) - a + 1;
        if (n < 1)
          throw new ClientConfigError(`${field}.high`, high, `a range holding an integer (low ${low})`);
        return { sample: (rng) => a + Math.floor(rng() * n), median: a + Math.floor((n - 1) / 2) };
      }
      return { sample: (rng) => low + (high - low) * rng(), median: (low + high) / 2 };
    }
    case 'exponential': {
      const mean = requirePositive(`${field}.mean`, config.mean);
      return { sample: (rng) => exponential(rng, mean), median: mean * Math.LN2 };
    }
    case 'lognormal': {
      let mu: number;
      let sigma: number;
      if ('median' in config) {
        requirePositive(`${field}.median`, config.median);
        if (!(Number.isFinite(config.p95) && config.p95 >= config.median)) {
          throw new ClientConfigError(`${field}.p95`, config.p95, `a number >= median (${config.median})`);
        }
        ({ mu, sigma } = lognormalParams(config.median, config.p95));
      } else {
        mu = config.mu;
        sigma = config.sigma;
        if (!Number.isFinite(mu)) throw new ClientConfigError(`${field}.mu`, mu, 'a finite number');
        requireNonNegative(`${field}.sigma`, sigma);
      }
      return { sample: (rng) => Math.exp(mu + sigma * normalQuantile(rng())), median: Math.exp(mu) };
    }
    case 'empirical':
      return empiricalSampler(config, field);
  }
}

function empiricalSampler(config: EmpiricalDistributionConfig, field: string): Distribution {
  const values = config.values;
  if (values.length === 0) throw new ClientConfigError(`${field}.values`, values, 'a non-empty list');
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) throw new ClientConfigError(`${field}.values[${i}]`, v, 'a finite number');
  });
  const weights = config.weights;
  if (weights === undefined) {
    const n = values.length;
    const sorted = [...values].sort((a, b) => a - b);
    return {
      sample: (rng) => values[Math.floor(rng() * n)] ?? 0,
      median: sorted[Math.floor((n - 1) / 2)] ?? 0,
    };
  }
  if (weights.length !== values.length) {
    throw new ClientConfigError(
      `${field}.weights`,
      weights.length,
      `a list as long as values (${values.length})`,
    );
  }
  weights.forEach((w, i) => {
    requireNonNegative(`${field}.weights[${i}]`, w);
  });
  const cumulative = cumulativeSums(weights);
  const total = cumulative[cumulative.length - 1] ?? 0;
  if (!(total > 0)) throw new ClientConfigError(`${field}.weights`, weights, 'weights with a positive sum');
  const order = values.map((_v, i) => i).sort((a, b) => (values[a] ?? 0) - (values[b] ?? 0));
  let acc = 0;
  let median = values[order[0] ?? 0] ?? 0;
  for (const i of order) {
    acc += weights[i] ?? 0;
    median = values[i] ?? 0;
    if (acc >= total / 2) break;
  }
  return { sample: (rng) => values[pickCumulative(rng, cumulative)] ?? 0, median };
}
