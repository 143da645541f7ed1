/**
 * The exchange's life driven through every order of its events, as the
 * handler drives it: the request's end, the gate's turn, a failed leg, the
 * response's finish (after the answer, or after an h2 reset), its close, the
 * socket's close. Whatever the order: every unit taken is released exactly
 * once, the exchange is over exactly once, nothing is decided or run after
 * it is over, and a wait is cancelled only while it waits.
 */
import { describe, expect, test } from 'vitest';
import { ExchangeLife, type LifeHooks } from './exchange-life.js';

type Event =
  | 'body_end'
  | 'turn'
  | 'leg_failed'
  | 'finish_answered'
  | 'finish_reset'
  | 'res_close'
  | 'socket_close';
type Decision = 'admit' | 'queue' | 'refuse';

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [xs.slice()];
  const out: T[][] = [];
  xs.forEach((x, i) => {
    for (const rest of permutations([...xs.slice(0, i), ...xs.slice(i + 1)])) out.push([x, ...rest]);
  });
  return out;
}

interface Tally {
  taken: number;
  released: number;
  overs: number;
  decided: number;
  ranAfterOver: number;
  runs: number;
  cancels: number;
  cancelWhileNotWaiting: number;
  aborts: number;
  abortWithoutRun: number;
  overReleasedEarly: boolean;
}

/** Drives one life through `order`, the gate deciding `decision` when the body ends. */
function drive(order: readonly Event[], decision: Decision): Tally {
  const t: Tally = {
    taken: 0,
    released: 0,
    overs: 0,
    decided: 0,
    ranAfterOver: 0,
    runs: 0,
    cancels: 0,
    cancelWhileNotWaiting: 0,
    aborts: 0,
    abortWithoutRun: 0,
    overReleasedEarly: false,
  };
  const hooks: LifeHooks = {
    releaseUnit: () => {
      t.released++;
      expect(t.released).toBeLessThanOrEqual(t.taken);
    },
    cancelWait: () => {
      t.cancels++;
      if (life.phase !== 'over' || t.taken > 0) t.cancelWhileNotWaiting++;
    },
    abortLeg: () => {
      t.aborts++;
      if (t.runs === 0) t.abortWithoutRun++;
    },
    over: () => {
      t.overs++;
      // By the time the record is written the unit is back.
      if (t.released !== t.taken) t.overReleasedEarly = true;
    },
  };
  const life = new ExchangeLife(hooks);
  const take = (): void => {
    t.taken++;
    if (life.took()) {
      if (life.over) t.ranAfterOver++;
      t.runs++;
    }
  };
  for (const e of order) {
    switch (e) {
      case 'body_end':
        if (life.bodyRead()) {
          t.decided++;
          if (life.over) t.ranAfterOver++;
          if (decision === 'admit') take();
          else if (decision === 'queue') life.queued();
          else life.answering();
        }
        break;
      case 'turn':
        // The gate hands a waiter its turn only when the exchange says it can take it.
        if (life.canTakeTurn) take();
        break;
      case 'leg_failed':
        life.release();
        break;
      case 'finish_answered':
        life.answered();
        break;
      case 'finish_reset':
      case 'res_close':
      case 'socket_close':
        life.gone();
        break;
    }
  }
  return t;
}

const EVENTS: Event[] = [
  'body_end',
  'turn',
  'leg_failed',
  'finish_answered',
  'finish_reset',
  'res_close',
  'socket_close',
];

describe('exchange life', () => {
  for (const decision of ['admit', 'queue', 'refuse'] as const) {
    test(`every order of the seven events, the gate deciding ${decision}: each unit released once, over once`, () => {
      const orders = permutations(EVENTS);
      expect(orders).toHaveLength(5040);
      for (const order of orders) {
        const t = drive(order, decision);
        const where = `${decision}: ${order.join(' → ')}`;
        expect(t.released, where).toBe(t.taken);
        expect(t.overs, where).toBe(1);
        expect(t.decided, where).toBeLessThanOrEqual(1);
        expect(t.ranAfterOver, where).toBe(0);
        expect(t.runs, where).toBeLessThanOrEqual(1);
        expect(t.cancelWhileNotWaiting, where).toBe(0);
        expect(t.aborts, where).toBeLessThanOrEqual(1);
        expect(t.abortWithoutRun, where).toBe(0);
        expect(t.overReleasedEarly, where).toBe(false);
      }
    });
  }

  test('an h2 reset before the body ends: the late body is never decided', () => {
    const t = drive(['finish_reset', 'res_close', 'body_end', 'turn'], 'admit');
    expect(t).toMatchObject({ decided: 0, taken: 0, released: 0, overs: 1 });
  });

  test('a unit handed to an exchange already over goes back at once and nothing runs', () => {
    let released = 0;
    const life = new ExchangeLife({
      releaseUnit: () => released++,
      cancelWait() {},
      abortLeg() {},
      over() {},
    });
    life.bodyRead();
    life.gone();
    expect(life.took()).toBe(false);
    expect(released).toBe(1);
  });

  test('a waiter whose client leaves cancels its wait once; a queued pipelined exchange ends on the socket close alone', () => {
    const t = drive(['body_end', 'socket_close', 'turn', 'res_close'], 'queue');
    expect(t).toMatchObject({ cancels: 1, taken: 0, overs: 1 });
  });

  test('a client leaving while the leg runs aborts the leg and releases the unit', () => {
    const t = drive(['body_end', 'res_close', 'leg_failed', 'finish_answered'], 'admit');
    expect(t).toMatchObject({ runs: 1, aborts: 1, taken: 1, released: 1, overs: 1 });
  });
});
