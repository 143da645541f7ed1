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

describe('MicrosecondHistogram.addManyUs and watched sources', () => {
  it('counts n equal values as n calls of addUs would, in every read', () => {
    const one = new MicrosecondHistogram();
    const many = new MicrosecondHistogram();
    const values: [number, number][] = [
      [0, 3],
      [-5, 2],
      [1023, 1],
      [1024, 7],
      [20_417, 250],
      [2 ** 31 + 17, 2],
      [7, 0],
    ];
    for (const [v, n] of values) {
      for (let i = 0; i < n; i++) one.addUs(v);
      many.addManyUs(v, n);
    }
    expect(many.count).toBe(265);
    expect(many.count).toBe(one.count);
    expect(many.mean).toBe(one.mean);
    expect(many.max).toBe(one.max);
    for (const q of [0, 0.01, 0.02, 0.5, 0.99, 0.995, 1]) expect(many.quantile(q)).toBe(one.quantile(q));
  });

  it('settles a watched source before every read, and once per source', () => {
    const h = new MicrosecondHistogram();
    let pending: number[] = [];
    let settles = 0;
    const source = {
      settleGaps: () => {
        settles++;
        for (const v of pending) h.addManyUs(v, 2);
        pending = [];
      },
    };
    h.watch(source);
    h.watch(source);
    pending = [5000, 6000];
    expect(h.count).toBe(4);
    expect(settles).toBe(1);
    pending = [9000];
    expect(h.max).toBe(9);
    pending = [100];
    expect(h.quantile(0)).toBe(0.1);
    pending = [1000];
    expect(h.mean).toBe((2 * 5000 + 2 * 6000 + 2 * 9000 + 2 * 100 + 2 * 1000) / 10 / 1000);
    expect(settles).toBe(4);
  });
});
