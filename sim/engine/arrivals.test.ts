import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { benchSendTimes, gammaDraw } from './arrivals.js';

const moments = (xs: readonly number[]): [number, number] => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return [m, xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length];
};

describe('vllm bench serve send times', () => {
  it('Gamma(k, 1) draws have mean k and variance k, for k below and above 1', () => {
    for (const k of [0.3, 1, 4]) {
      const rng = rngStream(7, `g${k}`);
      const [m, v] = moments(Array.from({ length: 40_000 }, () => gammaDraw(rng, k)));
      expect(Math.abs(m / k - 1)).toBeLessThan(0.03);
      expect(Math.abs(v / k - 1)).toBeLessThan(0.06);
    }
  });

  it('are rescaled so the last is due at N/R, with gaps whose CV is 1/sqrt(burstiness)', () => {
    for (const b of [0.25, 1, 4]) {
      const t = benchSendTimes(5000, 10, b, rngStream(1, `t${b}`));
      expect(t[4999]).toBeCloseTo(500_000, 0);
      const gaps = t.map((x, i) => x - (i === 0 ? 0 : (t[i - 1] as number)));
      const [m, v] = moments(gaps);
      expect(Math.abs((Math.sqrt(v) / m) * Math.sqrt(b) - 1)).toBeLessThan(0.06);
      expect(gaps.every((g) => g >= 0)).toBe(true);
    }
  });

  it('are all 0 at an infinite rate and evenly spaced at infinite burstiness; refuse a rate or burstiness <= 0', () => {
    expect(benchSendTimes(3, Number.POSITIVE_INFINITY, 1, rngStream(1, 'x'))).toEqual([0, 0, 0]);
    expect(benchSendTimes(4, 4, Number.POSITIVE_INFINITY, rngStream(1, 'x'))).toEqual([250, 500, 750, 1000]);
    expect(() => benchSendTimes(3, 0, 1, rngStream(1, 'x'))).toThrow(/request rate > 0, got 0/);
    expect(() => benchSendTimes(3, 1, -1, rngStream(1, 'x'))).toThrow(/burstiness > 0, got -1/);
  });
});
