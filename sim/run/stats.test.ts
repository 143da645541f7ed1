import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { select } from './stats.js';

describe('per-second percentiles', () => {
  it('select finds the same k-th smallest as a sort, with ties, runs and any order', () => {
    const rng = rngStream(3, 'select');
    for (let round = 0; round < 300; round++) {
      const n = rng.int(1, 120);
      const spread = rng.int(1, 6) === 1 ? 3 : 1000; // some arrays are mostly ties
      const xs = Array.from({ length: n }, () => Math.round(rng.next() * spread * 1000) / 1000);
      if (round % 7 === 0) xs.sort((a, b) => a - b);
      if (round % 11 === 0) xs.sort((a, b) => b - a);
      const sorted = [...xs].sort((a, b) => a - b);
      const k = rng.int(0, n - 1);
      const copy = [...xs];
      expect(select(copy, k)).toBe(sorted[k]);
      // A second selection on the reordered array is still exact (p50 then p95 share one).
      const k2 = rng.int(0, n - 1);
      expect(select(copy, k2)).toBe(sorted[k2]);
      expect([...copy].sort((a, b) => a - b)).toEqual(sorted);
    }
  });
});
