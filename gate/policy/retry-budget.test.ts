import { describe, expect, it } from 'vitest';
import { RetryBudget } from './retry-budget.js';

describe('retry budget', () => {
  it('an old intent still in flight does not keep finished ones from being forgotten', () => {
    const b = new RetryBudget(3, 1000, 1000);
    expect(b.begin('long', 0)).toBe('first');
    expect(b.begin('done', 10)).toBe('first');
    b.end('done', 'completed', 20);
    expect(b.begin('other', 2000)).toBe('first');
    expect(b.state('done')).toBeUndefined();
    expect(b.state('long')).toEqual({ attempts: 1, state: 'in_flight' });
  });

  it('remembers at most max_intents, dropping the oldest finished one first', () => {
    const b = new RetryBudget(3, 1_000_000, 2);
    b.begin('a', 0);
    b.end('a', 'completed', 0);
    b.begin('b', 1);
    b.begin('c', 2);
    expect(b.size).toBe(2);
    expect(b.state('a')).toBeUndefined();
    expect(b.state('b')?.state).toBe('in_flight');
  });

  it('ending an intent that is not in flight changes nothing', () => {
    const b = new RetryBudget(3, 1000, 10);
    b.begin('a', 0);
    b.end('a', 'completed', 1);
    b.end('a', 'failed', 2);
    expect(b.state('a')).toEqual({ attempts: 1, state: 'completed' });
  });
});
