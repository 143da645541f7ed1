import { describe, expect, it } from 'vitest';
import { meets, parseSlo, parseSlos, violation } from './slo.js';

describe('--slo parsing', () => {
  it('reads metric, comparison and limit, in normal form', () => {
    expect(parseSlo(' ttft_p95_ms <= 2000 ')).toEqual({
      text: 'ttft_p95_ms<=2000',
      metric: 'ttft_p95_ms',
      op: '<=',
      limit: 2000,
    });
    expect(parseSlo('goodput_share>=0.9').op).toBe('>=');
    expect(parseSlo('shed_rate<5e-2').limit).toBe(0.05);
  });

  it('refuses an unknown metric with a suggestion and the list of known ones', () => {
    expect(() => parseSlo('ttft_p96_ms<=2000')).toThrow(
      /--slo "ttft_p96_ms<=2000": unknown metric "ttft_p96_ms" \(did you mean ttft_p95_ms\?\); known: goodput_rps, /,
    );
  });

  it('refuses malformed expressions and limits', () => {
    expect(() => parseSlo('ttft_p95_ms=2000')).toThrow('expected METRIC<=LIMIT or METRIC>=LIMIT');
    expect(() => parseSlo('ttft_p95_ms<=2s')).toThrow('the limit "2s" is not a number');
    expect(() => parseSlos(['shed_rate<=0.05', 'shed_rate <= 0.05'])).toThrow(
      '--slo shed_rate<=0.05: given twice',
    );
  });
});

describe('SLO evaluation', () => {
  const ttft = parseSlo('ttft_p95_ms<=2000');
  const share = parseSlo('goodput_share>=0.9');

  it('meets at the bound for <= and >=, not for a strict bound', () => {
    expect(meets(ttft, 2000)).toBe(true);
    expect(meets(ttft, 2000.001)).toBe(false);
    expect(meets(share, 0.9)).toBe(true);
    expect(meets(parseSlo('shed_rate<0.05'), 0.05)).toBe(false);
  });

  it('never meets a missing figure', () => {
    expect(meets(ttft, null)).toBe(false);
    expect(violation(ttft, null)).toBe(Number.POSITIVE_INFINITY);
  });

  it('measures a miss relative to the limit', () => {
    expect(violation(ttft, 1500)).toBe(0);
    expect(violation(ttft, 2500)).toBe(0.25);
    expect(violation(share, 0.45)).toBeCloseTo(0.5, 12);
  });
});
