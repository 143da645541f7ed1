import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from './histogram.js';

describe('latency histogram', () => {
  it('gives percentiles within 0.5% of the exact ones', () => {
    const h = new LatencyHistogram();
    const values = Array.from({ length: 10_000 }, (_, i) => 1 + i * 0.37);
    for (const v of values) h.add(v);
    for (const q of [0.5, 0.95, 0.99]) {
      const exact = values[Math.ceil(q * values.length) - 1]!;
      expect(Math.abs(h.quantile(q) - exact) / exact).toBeLessThan(0.005);
    }
    expect(h.quantile(1)).toBe(values.at(-1));
    expect(h.count).toBe(10_000);
  });

  it('keeps sub-millisecond values to 0.01 ms and reports NaN when empty', () => {
    const h = new LatencyHistogram();
    expect(Number.isNaN(h.quantile(0.5))).toBe(true);
    h.add(0.123);
    expect(h.quantile(0.5)).toBeCloseTo(0.123, 2);
  });

  it('orders values beyond the array-counted buckets after every other value', () => {
    const h = new LatencyHistogram();
    for (const v of [1e30, 5, 1e25, 0.5, 5]) h.add(v);
    // A quantile is its bucket's upper edge: under 1 ms at most 0.01 ms above the value, beyond at most 0.5 % above.
    expect(h.quantile(0.2)).toBeCloseTo(0.51, 9);
    expect(h.quantile(0.6) / 5).toBeGreaterThanOrEqual(1);
    expect(h.quantile(0.6) / 5).toBeLessThan(1.005);
    expect(h.quantile(0.8) / 1e25).toBeGreaterThanOrEqual(1);
    expect(h.quantile(0.8) / 1e25).toBeLessThan(1.005);
    expect(h.quantile(1)).toBe(1e30);
  });
});
