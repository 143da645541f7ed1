import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { ClosedLoopUsers } from './closed-loop.js';

describe('closed-loop users', () => {
  it('send their first requests spread evenly over the ramp-up', () => {
    const users = new ClosedLoopUsers(
      { users: 4, thinkTimeMs: { kind: 'fixed', value: 100 }, startMs: 1000, rampUpMs: 2000 },
      seedrandom('x'),
    );
    expect(users.start()).toEqual([
      { userId: 0, atMs: 1000 },
      { userId: 1, atMs: 1500 },
      { userId: 2, atMs: 2000 },
      { userId: 3, atMs: 2500 },
    ]);
    expect(users.active).toBe(4);
  });

  it('send again one think time after each request ends', () => {
    const users = new ClosedLoopUsers(
      { users: 2, thinkTimeMs: { kind: 'fixed', value: 250 } },
      seedrandom('x'),
    );
    users.start();
    expect(users.onFinished(1, 4000)).toBe(4250);
    expect(users.onFinished(0, 7000)).toBe(7250);
    expect(users.sentBy(0)).toBe(2);
  });

  it('stop after requestsPerUser and before stopAtMs', () => {
    const users = new ClosedLoopUsers(
      { users: 2, thinkTimeMs: { kind: 'fixed', value: 100 }, requestsPerUser: 2, stopAtMs: 1000 },
      seedrandom('x'),
    );
    users.start();
    expect(users.onFinished(0, 10)).toBe(110);
    expect(users.onFinished(0, 200)).toBeUndefined();
    expect(users.onFinished(1, 950)).toBeUndefined();
    expect(users.active).toBe(0);
  });

  it('keep at most one request per user in flight', () => {
    const users = new ClosedLoopUsers(
      { users: 1, thinkTimeMs: { kind: 'fixed', value: 1 } },
      seedrandom('x'),
    );
    expect(() => users.onFinished(0, 0)).toThrow(
      'ClosedLoopUsers.onFinished: user 0 has no request in flight',
    );
    users.start();
    users.onFinished(0, 0);
    expect(() => users.start()).toThrow('already started');
  });

  it('draw think times from the distribution, the same for the same seed', () => {
    const make = () => {
      const users = new ClosedLoopUsers(
        { users: 1, thinkTimeMs: { kind: 'exponential', mean: 2000 } },
        seedrandom('x'),
      );
      users.start();
      const gaps: number[] = [];
      let now = 0;
      for (let i = 0; i < 20_000; i += 1) {
        const next = users.onFinished(0, now) ?? Number.NaN;
        gaps.push(next - now);
        now = next + 10;
      }
      return gaps;
    };
    const gaps = make();
    expect(Math.abs(gaps.reduce((a, b) => a + b, 0) / gaps.length / 2000 - 1)).toBeLessThan(0.03);
    expect(make()).toEqual(gaps);
  });

  it('never think for a negative time', () => {
    const users = new ClosedLoopUsers(
      { users: 1, thinkTimeMs: { kind: 'uniform', low: -50, high: 50 } },
      seedrandom('x'),
    );
    users.start();
    for (let i = 0; i < 200; i += 1) expect(users.onFinished(0, 100)).toBeGreaterThanOrEqual(100);
  });
});
