import { describe, expect, it } from 'vitest';
import { LatencyHistogram, MicrosecondHistogram } from './histogram.js';

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

describe('microsecond histogram', () => {
  it('gives the nearest-rank sample or at most 1/1024 above it, exactly below 1,024 µs', () => {
    let seed = 5;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let trial = 0; trial < 200; trial++) {
      const h = new MicrosecondHistogram();
      const xs: number[] = [];
      const n = 1 + Math.floor(rnd() * 500);
      // Whole µs from 1 to about 5·10^8 (8 min), log-uniform; some trials all below 1,024.
      const span = trial % 4 === 0 ? 6.9 : 20;
      for (let i = 0; i < n; i++) {
        const v = Math.floor(Math.exp(rnd() * span));
        xs.push(v);
        h.addUs(v);
      }
      xs.sort((a, b) => a - b);
      for (const q of [0, 0.01, 0.5, 0.9, 0.95, 0.99, 1]) {
        const exact = xs[Math.max(1, Math.ceil(q * n)) - 1]!;
        const got = Math.round(h.quantile(q) * 1000);
        expect(got).toBeGreaterThanOrEqual(exact);
        expect(got).toBeLessThanOrEqual(exact < 1024 ? exact : exact * (1 + 1 / 1024));
      }
      expect(h.max).toBe(xs[n - 1]! / 1000);
      expect(h.mean).toBeCloseTo(xs.reduce((a, b) => a + b, 0) / n / 1000, 9);
    }
  });

  it('rounds ms to the µs, counts negatives as 0, and past 2^31 µs falls back to log buckets', () => {
    const h = new MicrosecondHistogram();
    expect(Number.isNaN(h.quantile(0.5))).toBe(true);
    h.add(3.2504);
    h.add(-2);
    h.addUs(2 ** 31 + 5);
    expect(h.count).toBe(3);
    expect(h.quantile(0)).toBe(0);
    // 3,250 µs, in a bucket 2 µs wide at this octave: its upper edge.
    expect(h.quantile(0.5)).toBe(3.251);
    const top = h.quantile(1);
    expect(top).toBeGreaterThanOrEqual((2 ** 31 + 5) / 1000);
    expect(top).toBeLessThanOrEqual(((2 ** 31 + 5) / 1000) * 1.005);
  });
});
