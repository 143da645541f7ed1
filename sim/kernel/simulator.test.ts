import { describe, expect, it } from 'vitest';
import { rngStream } from './rng.js';
import { type EventHandle, Simulator } from './simulator.js';

describe('Simulator', () => {
  it('runs events in time order and advances the clock to each', () => {
    const sim = new Simulator();
    const seen: [string, number][] = [];
    sim.schedule(3, () => seen.push(['c', sim.now()]));
    sim.schedule(1.5, () => seen.push(['a', sim.now()]));
    sim.after(2, () => seen.push(['b', sim.now()]));
    expect(sim.run()).toBe(3);
    expect(seen).toEqual([
      ['a', 1.5],
      ['b', 2],
      ['c', 3],
    ]);
  });

  it('keeps microsecond resolution: 6.6071 ms rounds to 6607 µs and sums do not drift', () => {
    const sim = new Simulator();
    let n = 0;
    const step = (): void => {
      if (++n < 1000) sim.after(6.6071, step);
    };
    sim.after(6.6071, step);
    sim.run();
    expect(sim.nowUs()).toBe(6_607_000);
    expect(sim.now()).toBe(6607);
  });

  it('runs same-time events scheduled from inside an event after those already queued', () => {
    const sim = new Simulator();
    const order: string[] = [];
    sim.schedule(1, () => {
      order.push('a');
      sim.after(0, () => order.push('a-child'));
    });
    sim.schedule(1, () => order.push('b'));
    sim.run();
    expect(order).toEqual(['a', 'b', 'a-child']);
  });

  it('run(until) stops before later events, includes events at until, and moves the clock to until', () => {
    const sim = new Simulator();
    const order: number[] = [];
    for (const t of [1, 5, 10, 11]) sim.schedule(t, () => order.push(t));
    expect(sim.run(10)).toBe(3);
    expect(order).toEqual([1, 5, 10]);
    expect(sim.now()).toBe(10);
    sim.run(10.5);
    expect(sim.now()).toBe(10.5);
    expect(sim.run()).toBe(1);
    expect(sim.eventCount).toBe(4);
  });

  it('stop() ends the run after the current event and leaves the rest pending', () => {
    const sim = new Simulator();
    const order: number[] = [];
    sim.schedule(1, () => order.push(1));
    sim.schedule(2, () => {
      order.push(2);
      sim.stop();
    });
    sim.schedule(3, () => order.push(3));
    sim.run(100);
    expect(order).toEqual([1, 2]);
    expect(sim.now()).toBe(2);
    expect(sim.pendingCount).toBe(1);
  });

  it('a cancelled event does not run', () => {
    const sim = new Simulator();
    const order: string[] = [];
    const h = sim.schedule(1, () => order.push('cancelled'));
    sim.schedule(2, () => order.push('kept'));
    expect(sim.cancel(h)).toBe(true);
    sim.run();
    expect(order).toEqual(['kept']);
  });

  it('passes the stored argument to a shared callback', () => {
    const sim = new Simulator();
    const got: number[] = [];
    const onEvent = (engineId: number): void => {
      got.push(engineId);
    };
    sim.schedule(2, onEvent, 7);
    sim.schedule(1, onEvent, 3);
    sim.run();
    expect(got).toEqual([3, 7]);
  });

  it('every() fires at each period until cancelled, including when cancelled from inside', () => {
    const sim = new Simulator();
    const ticks: number[] = [];
    const cancel = sim.every(250, () => {
      ticks.push(sim.now());
      if (ticks.length === 4) cancel();
    });
    sim.run(10_000);
    expect(ticks).toEqual([250, 500, 750, 1000]);
    expect(sim.pendingCount).toBe(0);
  });

  it('rejects scheduling in the past and negative delays', () => {
    const sim = new Simulator(100);
    expect(() => sim.schedule(99.9994, () => {})).toThrow(RangeError);
    expect(() => sim.after(-1, () => {})).toThrow(RangeError);
    expect(() => sim.every(0, () => {})).toThrow(RangeError);
    expect(() => sim.schedule(Number.NaN, () => {})).toThrow(RangeError);
  });

  it('runs events near and far ahead, and timers, in the order of one queue', () => {
    // The same random script twice: recurring work as timers, then as scheduled events
    // (cancel + schedule for each change). Times collide often, so ties are exercised.
    const script = (useTimers: boolean): string[] => {
      const sim = new Simulator();
      const rng = rngStream(7, 'script');
      const log: string[] = [];
      const n = 12;
      const set: ((atMs: number) => void)[] = [];
      const clear: (() => void)[] = [];
      for (let k = 0; k < n; k++) {
        const fire = (): void => {
          log.push(`t${k}@${sim.nowUs()}`);
          if (rng.next() < 0.8) set[k]!(sim.now() + rng.int(0, 3) * 0.5);
          if (rng.next() < 0.3) sim.after(rng.int(0, 2000), () => log.push(`e${k}@${sim.nowUs()}`));
          const other = rng.int(0, n - 1);
          const r = rng.next();
          if (r < 0.2) clear[other]!();
          else if (r < 0.4) set[other]!(sim.now() + rng.int(0, 4));
        };
        if (useTimers) {
          const t = sim.timer(fire);
          set.push((at) => t.set(at));
          clear.push(() => void t.clear());
        } else {
          let h: EventHandle | null = null;
          const run = (): void => {
            h = null;
            fire();
          };
          set.push((at) => {
            if (h !== null) sim.cancel(h);
            h = sim.schedule(at, run);
          });
          clear.push(() => {
            if (h !== null) sim.cancel(h);
            h = null;
          });
        }
      }
      for (let k = 0; k < n; k++) set[k]!(k % 3);
      sim.every(1000, () => {
        log.push(`tick@${sim.nowUs()}`);
        for (let k = 0; k < n; k++) if (rng.next() < 0.5) set[k]!(sim.now() + rng.int(0, 1500));
      });
      sim.run(20_000);
      log.push(`events ${sim.eventCount} pending ${sim.pendingCount}`);
      return log;
    };
    const withTimers = script(true);
    expect(withTimers.length).toBeGreaterThan(500);
    expect(withTimers).toEqual(script(false));
  });

  it('a timer fires once per set, can be cleared, and counts as pending', () => {
    const sim = new Simulator();
    const fired: number[] = [];
    const t = sim.timer(() => fired.push(sim.now()));
    t.set(5);
    t.set(3);
    expect(t.pending).toBe(true);
    expect(sim.pendingCount).toBe(1);
    sim.run(4);
    expect(fired).toEqual([3]);
    expect(t.pending).toBe(false);
    t.set(10);
    expect(t.clear()).toBe(true);
    expect(t.clear()).toBe(false);
    sim.run();
    expect(fired).toEqual([3]);
    expect(() => t.set(1)).toThrow(RangeError);
  });
});
