import { afterEach, describe, expect, it, vi } from 'vitest';
import { RealClock } from './clock.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('RealClock', () => {
  it('counts real milliseconds by default', () => {
    vi.useFakeTimers({ toFake: ['performance', 'setInterval', 'clearInterval'] });
    const clock = new RealClock();
    const t0 = clock.now();
    vi.advanceTimersByTime(250);
    expect(clock.now() - t0).toBe(250);
  });

  it('with a time scale, counts that many ms per real ms and runs its timers that much more often', () => {
    vi.useFakeTimers({ toFake: ['performance', 'setInterval', 'clearInterval'] });
    const clock = new RealClock(4);
    const t0 = clock.now();
    let ticks = 0;
    const cancel = clock.every(1000, () => ticks++);
    vi.advanceTimersByTime(250);
    expect(clock.now() - t0).toBe(1000);
    expect(ticks).toBe(1);
    vi.advanceTimersByTime(750);
    expect(ticks).toBe(4);
    cancel();
    vi.advanceTimersByTime(1000);
    expect(ticks).toBe(4);
    clock.dispose();
  });

  it('refuses a time scale that is not a finite number above 0', () => {
    expect(() => new RealClock(0)).toThrow(/time scale: 0/);
    expect(() => new RealClock(Number.NaN)).toThrow(RangeError);
  });
});
