import { describe, expect, it } from 'vitest';
import { createRetryPolicy, isRetryableStatus, type RetryContext } from './retry.js';

const half = () => 0.5;
const zero = () => 0;
const ctx = (attempt: number, status = 429, extra: Partial<RetryContext> = {}): RetryContext => ({
  attempt,
  status,
  ...extra,
});

describe('retryable statuses', () => {
  it('are no response, 408, 409, 429 and 5xx, as in the Stainless SDKs', () => {
    expect([0, 408, 409, 429, 500, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([200, 400, 401, 404, 422].some(isRetryableStatus)).toBe(false);
  });
});

describe('no retry', () => {
  it('always gives up', () => {
    expect(createRetryPolicy({ kind: 'none' })(ctx(1, 503, { retryAfterSec: 1 }), half)).toBeUndefined();
  });
});

describe('sdk retry (openai / anthropic Stainless clients)', () => {
  const sdk = createRetryPolicy({ kind: 'sdk' });

  it('backs off 0.5 s then 1 s, times (1 − 0.25·U), and gives up after 2 retries', () => {
    expect(sdk(ctx(1), half)).toBe(437.5);
    expect(sdk(ctx(2), half)).toBe(875);
    expect(sdk(ctx(3), half)).toBeUndefined();
    expect(sdk(ctx(1), zero)).toBe(500);
  });

  it('caps the backoff at 8 s', () => {
    const many = createRetryPolicy({ kind: 'sdk', maxRetries: 10 });
    expect(many(ctx(6), zero)).toBe(8000);
    expect(many(ctx(10), half)).toBe(7000);
  });

  it('sleeps a Retry-After of 0 < v <= 60 s exactly, without drawing', () => {
    let draws = 0;
    const rng = () => {
      draws += 1;
      return 0.5;
    };
    expect(sdk(ctx(1, 429, { retryAfterSec: 30 }), rng)).toBe(30_000);
    expect(sdk(ctx(1, 429, { retryAfterSec: 60 }), rng)).toBe(60_000);
    expect(draws).toBe(0);
  });

  it('backs off instead when Retry-After is 0 or above 60 s', () => {
    expect(sdk(ctx(1, 429, { retryAfterSec: 0 }), half)).toBe(437.5);
    expect(sdk(ctx(2, 503, { retryAfterSec: 61 }), half)).toBe(875);
  });

  it('gives up on a status it does not retry', () => {
    expect(sdk(ctx(1, 400), half)).toBeUndefined();
    expect(sdk(ctx(1, 200), half)).toBeUndefined();
  });
});

describe('honour retry', () => {
  const honour = createRetryPolicy({ kind: 'honour', maxRetries: 2 });

  it('waits Retry-After plus a uniform share of the jitter hint', () => {
    expect(honour(ctx(1, 429, { retryAfterSec: 1, jitterHintMs: 500 }), half)).toBe(1250);
    expect(honour(ctx(2, 429, { retryAfterSec: 5, jitterHintMs: 1000 }), zero)).toBe(5000);
    expect(honour(ctx(3, 429, { retryAfterSec: 1, jitterHintMs: 500 }), half)).toBeUndefined();
  });

  it('waits the fallback delay (plus jitter) without a Retry-After', () => {
    expect(honour(ctx(1, 504), half)).toBe(1000);
    expect(
      createRetryPolicy({ kind: 'honour', fallbackDelayMs: 200 })(ctx(1, 0, { jitterHintMs: 100 }), half),
    ).toBe(250);
  });
});

describe('naive retry', () => {
  it('retries at once, up to maxRetries, ignoring Retry-After', () => {
    const naive = createRetryPolicy({ kind: 'naive', maxRetries: 3 });
    expect([1, 2, 3, 4].map((a) => naive(ctx(a, 429, { retryAfterSec: 10 }), half))).toEqual([
      0,
      0,
      0,
      undefined,
    ]);
  });
});

describe('synchronised retry', () => {
  it('retries everyone after the same fixed delay, without drawing', () => {
    const sync = createRetryPolicy({ kind: 'synchronised', delayMs: 2000, maxRetries: 2 });
    const rng = () => {
      throw new Error('must not draw');
    };
    expect(sync(ctx(1, 503, { jitterHintMs: 800 }), rng)).toBe(2000);
    expect(sync(ctx(2, 429, { retryAfterSec: 7 }), rng)).toBe(2000);
    expect(sync(ctx(3, 429), rng)).toBeUndefined();
  });

  it('uses the Retry-After itself when told to honour it', () => {
    const herd = createRetryPolicy({ kind: 'synchronised', honourRetryAfter: true });
    expect(herd(ctx(1, 429, { retryAfterSec: 1 }), zero)).toBe(1000);
    expect(herd(ctx(1, 504), zero)).toBe(1000);
  });
});

describe('retry config errors', () => {
  it('name the field and the bound', () => {
    expect(() => createRetryPolicy({ kind: 'naive', maxRetries: 1.5 })).toThrow(
      'retry.maxRetries: 1.5 is not an integer >= 0',
    );
  });
});
