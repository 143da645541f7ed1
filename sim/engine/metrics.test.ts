import { describe, expect, it } from 'vitest';
import { build125Buckets, Histogram } from './metrics.js';

describe('Histogram', () => {
  it('puts a value equal to a bound in that bound’s bucket (le is inclusive) and overflow in +Inf', () => {
    const h = new Histogram([0.1, 0.5, 1]);
    for (const v of [0.1, 0.1000001, 0.5, 3, 0]) h.observe(v);
    expect(h.snapshot()).toEqual({ bounds: [0.1, 0.5, 1], counts: [2, 2, 0, 1], sum: 3.7000001, count: 5 });
  });
});

describe('build125Buckets', () => {
  it('matches vLLM build_1_2_5_buckets', () => {
    expect(build125Buckets(100)).toEqual([1, 2, 5, 10, 20, 50, 100]);
    expect(build125Buckets(4096)).toEqual([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]);
  });
});
