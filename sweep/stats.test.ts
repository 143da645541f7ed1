import { describe, expect, it } from 'vitest';
import { confidenceInterval, mean, roundTo, sampleStdDev, studentTCritical } from './stats.js';

describe('sweep statistics', () => {
  it('computes the mean and the sample standard deviation', () => {
    expect(mean([10, 12, 14])).toBe(12);
    expect(sampleStdDev([10, 12, 14])).toBe(2);
    expect(sampleStdDev([5])).toBe(0);
  });

  it('gives the two-sided 95% Student t critical values of the tables', () => {
    const table: [number, number][] = [
      [1, 12.706],
      [2, 4.303],
      [3, 3.182],
      [4, 2.776],
      [9, 2.262],
      [29, 2.045],
      [120, 1.98],
    ];
    for (const [df, t] of table) expect(roundTo(studentTCritical(df), 3)).toBe(t);
    expect(roundTo(studentTCritical(1e6), 2)).toBe(1.96);
    expect(roundTo(studentTCritical(4, 0.99), 3)).toBe(4.604);
  });

  it('builds mean ± t·s/√n', () => {
    const ci = confidenceInterval([10, 12, 14]);
    // t(2) = 4.3026527, s = 2, n = 3: half-width 4.3026527 · 2 / √3 = 4.968275
    expect(ci.mean).toBe(12);
    expect(roundTo(ci.halfWidth, 6)).toBe(4.968275);
    expect(roundTo(ci.low, 6)).toBe(7.031725);
    expect(roundTo(ci.high, 6)).toBe(16.968275);
  });

  it('collapses to the value with one seed and to the mean with identical seeds', () => {
    expect(confidenceInterval([7.5])).toEqual({ mean: 7.5, low: 7.5, high: 7.5, halfWidth: 0 });
    expect(confidenceInterval([3, 3, 3])).toEqual({ mean: 3, low: 3, high: 3, halfWidth: 0 });
  });
});
