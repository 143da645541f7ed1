import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { logGamma, lognormalFromMeanCv, lognormalFromMedianP95, rngStream, uniformStream } from './rng.js';

function draws(n: number, f: () => number): number[] {
  return Array.from({ length: n }, f);
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function variance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

describe('rngStream', () => {
  it('gives identical sequences for the same seed and name', () => {
    const a = rngStream(42, 'arrivals');
    const b = rngStream(42, 'arrivals');
    expect(draws(100, () => a.next())).toEqual(draws(100, () => b.next()));
  });

  it('gives different sequences for different seeds or names', () => {
    const base = draws(5, () => rngStream(42, 'arrivals').next());
    expect(rngStream(43, 'arrivals').next()).not.toBe(base[0]);
    expect(rngStream(42, 'lengths').next()).not.toBe(base[0]);
  });

  it('keeps streams independent: extra draws on one stream do not change another', () => {
    const a1 = rngStream('s', 'a');
    const b1 = rngStream('s', 'b');
    const a2 = rngStream('s', 'a');
    const b2 = rngStream('s', 'b');
    const seq1: number[] = [];
    const seq2: number[] = [];
    for (let i = 0; i < 50; i++) {
      a1.next();
      seq1.push(b1.next());
    }
    for (let i = 0; i < 50; i++) {
      a2.next();
      a2.next();
      a2.normal();
      seq2.push(b2.next());
    }
    expect(seq2).toEqual(seq1);
  });

  it('exponential(rate) has mean 1/rate within 1% over 200k draws', () => {
    const r = rngStream(1, 'exp');
    const xs = draws(200_000, () => r.exponential(2));
    expect(Math.abs(mean(xs) - 0.5)).toBeLessThan(0.005);
    expect(xs.every((x) => x >= 0)).toBe(true);
  });

  it('normal(mean, sd) has the requested mean and sd', () => {
    const r = rngStream(1, 'normal');
    const xs = draws(100_000, () => r.normal(10, 3));
    expect(Math.abs(mean(xs) - 10)).toBeLessThan(0.03);
    expect(Math.abs(Math.sqrt(variance(xs)) - 3)).toBeLessThan(0.03);
  });

  it('poisson has mean and variance lambda, small and large lambda', () => {
    const r = rngStream(1, 'poisson');
    for (const lambda of [3.5, 120]) {
      const xs = draws(100_000, () => r.poisson(lambda));
      expect(Math.abs(mean(xs) / lambda - 1)).toBeLessThan(0.01);
      expect(Math.abs(variance(xs) / lambda - 1)).toBeLessThan(0.03);
      expect(xs.every((x) => Number.isInteger(x) && x >= 0)).toBe(true);
    }
    expect(r.poisson(0)).toBe(0);
  });

  it('int(lo, hi) covers both ends and nothing outside', () => {
    const r = rngStream(1, 'int');
    const xs = draws(10_000, () => r.int(3, 6));
    expect([...new Set(xs)].sort()).toEqual([3, 4, 5, 6]);
  });

  it('pick(weights) follows the weights and never picks a zero weight', () => {
    const r = rngStream(1, 'pick');
    const counts = [0, 0, 0];
    for (let i = 0; i < 100_000; i++) counts[r.pick([1, 0, 3])]! += 1;
    expect(counts[1]).toBe(0);
    expect(Math.abs((counts[2] ?? 0) / 100_000 - 0.75)).toBeLessThan(0.01);
    expect(() => r.pick([0, 0])).toThrow(RangeError);
  });

  it('lognormal from (median, p95) reproduces those quantiles', () => {
    const { mu, sigma } = lognormalFromMedianP95(100, 400);
    expect(mu).toBeCloseTo(Math.log(100), 12);
    expect(sigma).toBeCloseTo(Math.log(4) / 1.6448536269514722, 12);
    const r = rngStream(1, 'lognormal');
    const xs = draws(100_000, () => r.lognormal(mu, sigma)).sort((a, b) => a - b);
    expect(Math.abs((xs[50_000] ?? 0) / 100 - 1)).toBeLessThan(0.02);
    expect(Math.abs((xs[95_000] ?? 0) / 400 - 1)).toBeLessThan(0.03);
  });

  it('lognormal from (mean, cv) has that mean and cv', () => {
    const { mu, sigma } = lognormalFromMeanCv(50, 0.5);
    expect(Math.exp(mu + sigma ** 2 / 2)).toBeCloseTo(50, 10);
    const r = rngStream(1, 'lognormal-cv');
    const xs = draws(200_000, () => r.lognormal(mu, sigma));
    expect(Math.abs(mean(xs) / 50 - 1)).toBeLessThan(0.01);
    expect(Math.abs(Math.sqrt(variance(xs)) / mean(xs) - 0.5)).toBeLessThan(0.01);
  });

  it('logGamma matches ln((n-1)!) and ln Γ(1/2)', () => {
    expect(logGamma(1)).toBeCloseTo(0, 12);
    expect(logGamma(11)).toBeCloseTo(Math.log(3628800), 10);
    expect(logGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
  });
});

describe('rngStream and uniformStream', () => {
  it("draw seedrandom's ARC4 numbers for the key seed/name, the stream and the bare function alike", () => {
    const reference = seedrandom('42/engine.3.api');
    const stream = rngStream(42, 'engine.3.api');
    const bare = uniformStream(42, 'engine.3.api');
    for (let i = 0; i < 1000; i++) {
      const want = reference.double();
      expect(stream.next()).toBe(want);
      expect(bare()).toBe(want);
    }
  });
});
