import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import {
  createDistribution,
  createTokenDistribution,
  type DistributionConfig,
  lognormalParams,
} from './distributions.js';
import { normalQuantile } from './rng.js';

const samples = (config: DistributionConfig, n: number, integer = false, seed = 'x'): number[] => {
  const d = createDistribution(config, { integer });
  const rng = seedrandom(seed);
  return Array.from({ length: n }, () => d.sample(rng));
};
const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))] ?? Number.NaN;
};

describe('normal quantile', () => {
  it('matches the standard normal table', () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963985, 8);
    expect(normalQuantile(0.95)).toBeCloseTo(1.644853627, 8);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232306, 8);
    expect(Number.isFinite(normalQuantile(0))).toBe(true);
  });
});

describe('fixed distribution', () => {
  it('always gives its value, clamped', () => {
    expect(samples({ kind: 'fixed', value: 7 }, 3)).toEqual([7, 7, 7]);
    expect(samples({ kind: 'fixed', value: 7, max: 5 }, 2)).toEqual([5, 5]);
  });
});

describe('uniform distribution', () => {
  it('covers [low, high] inclusive in integers, each value about equally often', () => {
    const xs = samples({ kind: 'uniform', low: 1, high: 4 }, 40_000, true);
    expect(new Set(xs)).toEqual(new Set([1, 2, 3, 4]));
    for (const v of [1, 2, 3, 4]) {
      expect(Math.abs(xs.filter((x) => x === v).length / 10_000 - 1)).toBeLessThan(0.05);
    }
  });

  it('stays inside [low, high) as a continuous distribution', () => {
    const xs = samples({ kind: 'uniform', low: 10, high: 20 }, 10_000);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...xs)).toBeLessThan(20);
  });
});

describe('lognormal distribution', () => {
  it('by median and p95 has that median within 2% and that p95 within 3% over 50,000 samples', () => {
    const xs = samples({ kind: 'lognormal', median: 1000, p95: 4000 }, 50_000);
    expect(Math.abs(quantile(xs, 0.5) / 1000 - 1)).toBeLessThan(0.02);
    expect(Math.abs(quantile(xs, 0.95) / 4000 - 1)).toBeLessThan(0.03);
  });

  it('by mu and sigma matches the quantile form', () => {
    const { mu, sigma } = lognormalParams(1000, 4000);
    expect(mu).toBeCloseTo(Math.log(1000), 12);
    expect(sigma).toBeCloseTo(Math.log(4) / 1.6448536269514722, 12);
    expect(samples({ kind: 'lognormal', mu, sigma }, 100)).toEqual(
      samples({ kind: 'lognormal', median: 1000, p95: 4000 }, 100),
    );
  });

  it('clamps to [min, max]', () => {
    const xs = samples({ kind: 'lognormal', median: 1000, p95: 10_000, min: 200, max: 3000 }, 20_000, true);
    expect(Math.min(...xs)).toBe(200);
    expect(Math.max(...xs)).toBe(3000);
    expect(xs.every(Number.isInteger)).toBe(true);
  });

  it('rejects a p95 below the median', () => {
    expect(() =>
      createDistribution({ kind: 'lognormal', median: 100, p95: 50 }, { field: 'prompt' }),
    ).toThrow('prompt.p95: 50 is not a number >= median (100)');
  });
});

describe('exponential distribution', () => {
  it('has the configured mean within 2%', () => {
    const xs = samples({ kind: 'exponential', mean: 3000 }, 50_000);
    expect(Math.abs(xs.reduce((a, b) => a + b, 0) / xs.length / 3000 - 1)).toBeLessThan(0.02);
  });
});

describe('empirical distribution', () => {
  it('draws only listed values, in proportion to their weights', () => {
    const xs = samples({ kind: 'empirical', values: [10, 20, 30], weights: [1, 0, 3] }, 40_000);
    expect(xs.filter((x) => x === 20)).toHaveLength(0);
    expect(Math.abs(xs.filter((x) => x === 30).length / 30_000 - 1)).toBeLessThan(0.02);
  });

  it('draws listed values uniformly without weights, and clamps', () => {
    const xs = samples({ kind: 'empirical', values: [1, 5, 100], max: 50 }, 3000);
    expect(new Set(xs)).toEqual(new Set([1, 5, 50]));
  });

  it('reports the weighted median', () => {
    expect(createDistribution({ kind: 'empirical', values: [30, 10, 20], weights: [5, 1, 1] }).median).toBe(
      30,
    );
    expect(createDistribution({ kind: 'empirical', values: [3, 1, 2] }).median).toBe(2);
  });

  it('rejects weights of another length', () => {
    expect(() => createDistribution({ kind: 'empirical', values: [1, 2], weights: [1] })).toThrow(
      'distribution.weights: 1 is not a list as long as values (2)',
    );
  });
});

describe('token distributions', () => {
  it('round to whole tokens and never go below 1', () => {
    const d = createTokenDistribution({ kind: 'uniform', low: -10, high: 2.6 });
    const rng = seedrandom('x');
    const xs = Array.from({ length: 2000 }, () => d.sample(rng));
    expect(Math.min(...xs)).toBe(1);
    expect(Math.max(...xs)).toBe(2);
  });

  it('make exactly one RNG draw per sample for every kind', () => {
    const configs: DistributionConfig[] = [
      { kind: 'fixed', value: 3 },
      { kind: 'uniform', low: 1, high: 9 },
      { kind: 'exponential', mean: 4 },
      { kind: 'lognormal', median: 5, p95: 9 },
      { kind: 'empirical', values: [1, 2], weights: [1, 1] },
    ];
    for (const c of configs) {
      let draws = 0;
      createTokenDistribution(c).sample(() => {
        draws += 1;
        return 0.3;
      });
      expect(draws).toBe(1);
    }
  });
});
