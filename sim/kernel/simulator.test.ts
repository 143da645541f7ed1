import { describe, expect, it } from 'vitest';
import { rngStream } from './rng.js';
import { Simulator } from './simulator.js';

/** What the order test's script uses of a simulator. */
interface ScriptSim {
  now(): number;
  nowUs(): number;
  after(delayMs: number, fn: () => void): unknown;
  every(periodMs: number, fn: () => void): unknown;
  timer(fn: () => void): { set(atMs: number): void; clear(): boolean };
  run(untilMs: number): number;
  readonly eventCount: number;
  readonly pendingCount: number;
}

/**
 * The documented order, naively: at each step the pending heap event with the lowest
 * (time, insertion number) if one is due no later than every timer, else the timer with the
 * lowest (time, creation index).
 */
class ReferenceSim implements ScriptSim {
  #nowUs = 0;
  #seq = 0;
  eventCount = 0;
  readonly #events: { us: number; seq: number; fn: () => void }[] = [];
  readonly #timers: { us: number; fn: () => void }[] = [];
  now(): number {
    return this.#nowUs / 1000;
  }
  nowUs(): number {
    return this.#nowUs;
  }
  get pendingCount(): number {
    return this.#events.length + this.#timers.filter((t) => t.us >= 0).length;
  }
  after(delayMs: number, fn: () => void): void {
    this.#events.push({ us: this.#nowUs + Math.round(delayMs * 1000), seq: this.#seq++, fn });
  }
  every(periodMs: number, fn: () => void): void {
    const tick = (): void => {
      this.after(periodMs, tick);
      fn();
    };
    this.after(periodMs, tick);
  }
  timer(fn: () => void): { set(atMs: number): void; clear(): boolean } {
    const t = { us: -1, fn };
    this.#timers.push(t);
    return {
      set: (atMs) => {
        t.us = Math.round(atMs * 1000);
      },
      clear: () => {
        const was = t.us >= 0;
        t.us = -1;
        return was;
      },
    };
  }
  run(untilMs: number): number {
    const until = untilMs * 1000;
    let count = 0;
    for (;;) {
      let e = -1;
      this.#events.forEach((x, i) => {
        const b = this.#events[e];
        if (b === undefined || x.us < b.us || (x.us === b.us && x.seq < b.seq)) e = i;
      });
      let t = -1;
      this.#timers.forEach((x, i) => {
        if (x.us >= 0 && (t < 0 || x.us < this.#timers[t]!.us)) t = i;
      });
      const eUs = e < 0 ? Number.POSITIVE_INFINITY : this.#events[e]!.us;
      const tUs = t < 0 ? Number.POSITIVE_INFINITY : this.#timers[t]!.us;
      if (Math.min(eUs, tUs) > until) break;
      count++;
      if (tUs < eUs) {
        const x = this.#timers[t]!;
        this.#nowUs = x.us;
        x.us = -1;
        x.fn();
      } else {
        const [x] = this.#events.splice(e, 1);
        this.#nowUs = x!.us;
        x!.fn();
      }
    }
    this.eventCount += count;
    this.#nowUs = Math.max(this.#nowUs, until);
    return count;
  }
}

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

  it('runs heap events near and far ahead in (time, insertion) order, then the timers due at that instant in creation order', () => {
    // The same random script on the simulator and on a naive reference of the documented
    // order (a linear scan over everything pending). Times collide often, so ties between
    // heap events, between timers, and between the two are exercised.
    const script = (sim: ScriptSim): string[] => {
      const rng = rngStream(7, 'script');
      const log: string[] = [];
      const n = 12;
      const timers = Array.from({ length: n }, (_, k) =>
        sim.timer(() => {
          log.push(`t${k}@${sim.nowUs()}`);
          if (rng.next() < 0.8) timers[k]!.set(sim.now() + rng.int(0, 3) * 0.5);
          if (rng.next() < 0.3) sim.after(rng.int(0, 2000), () => log.push(`e${k}@${sim.nowUs()}`));
          if (rng.next() < 0.3) sim.after(0, () => log.push(`z${k}@${sim.nowUs()}`));
          const other = rng.int(0, n - 1);
          const r = rng.next();
          if (r < 0.2) timers[other]!.clear();
          else if (r < 0.4) timers[other]!.set(sim.now() + rng.int(0, 4));
        }),
      );
      for (let k = 0; k < n; k++) timers[k]!.set(k % 3);
      sim.every(1000, () => {
        log.push(`tick@${sim.nowUs()}`);
        for (let k = 0; k < n; k++) if (rng.next() < 0.5) timers[k]!.set(sim.now() + rng.int(0, 1500));
      });
      sim.run(20_000);
      log.push(`events ${sim.eventCount} pending ${sim.pendingCount}`);
      return log;
    };
    const real = script(new Simulator());
    expect(real.length).toBeGreaterThan(500);
    expect(real).toEqual(script(new ReferenceSim()));
  });

  it('tells whether a timer due now would already have run (a timer of that index or higher ran at this instant)', () => {
    const sim = new Simulator();
    const seen: string[] = [];
    const probe = (label: string): void => {
      seen.push(`${label}:${[0, 1, 2].map((i) => (sim.timerHasRunNow(i) ? 1 : 0)).join('')}`);
    };
    const a = sim.timer(() => probe('a'));
    const b = sim.timer(() => {
      probe('b');
      sim.after(0, () => probe('heap-after-b'));
      a.set(sim.now());
    });
    sim.schedule(5, () => probe('heap'));
    b.set(5);
    sim.run();
    // The heap event runs first; b (index 1) then a heap event it scheduled; a (index 0), set
    // by b for the same instant, runs last, and index 1 counts as run all along.
    expect(seen).toEqual(['heap:000', 'b:110', 'heap-after-b:110', 'a:110']);
    sim.schedule(6, () => probe('later'));
    sim.run();
    expect(seen.at(-1)).toBe('later:000');
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
