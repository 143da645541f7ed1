/**
 * Property test of the policy host over a defer store that fails at random: outages on and off,
 * and single calls (pending, claim, finish, get, backlog) refused, between submits, releases,
 * cancels and clock advances. After every step: no gate call throws; seats equal the live
 * leases'; the gate's backlog equals the store's pending items, per class; an item is fed back at
 * most once and a draining item has one lease or one end waiting to be written. Once the store
 * answers again, everything drains and ends and no seat is held.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryDeferStore } from './defer-memory.js';
import { type DeferStoreCall, FailingDeferStore } from './defer-outage.js';
import { PolicyGate, type PolicyLease } from './host.js';
import { TEST_POLICY, testPolicy } from './test/policy.js';

const SEED = 20261203;
const RUNS = 100;
/** The test policy with room for a real backlog in `lo`. */
const POLICY = testPolicy(
  TEST_POLICY.replace('max_backlog: 2, drain_per_s: 1', 'max_backlog: 12, drain_per_s: 4'),
);
const CALLS: readonly DeferStoreCall[] = ['pending', 'claim', 'finish', 'get', 'backlog'];

type Op =
  | { op: 'submit'; repeat: number; lo: boolean; deadlineIn: number }
  | { op: 'release'; pick: number; outcome: 'completed' | 'failed' | 'cancelled' }
  | { op: 'cancelDeferred'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'outage'; on: boolean }
  | { op: 'refuse'; call: number; on: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('submit' as const),
      repeat: fc.integer({ min: 1, max: 8 }),
      lo: fc.boolean(),
      deadlineIn: fc.oneof(fc.integer({ min: 1, max: 4000 }), fc.constant(60_000)),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('release' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancelDeferred' as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 1500 }) }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('outage' as const), on: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('refuse' as const),
      call: fc.nat(CALLS.length - 1),
      on: fc.boolean(),
    }),
  },
);

interface Ctx {
  readonly id: number;
}

function run(ops: readonly Op[]): void {
  const clock = new ManualClock(0);
  const memory = new MemoryDeferStore();
  const refused = new Set<DeferStoreCall>();
  const store = new FailingDeferStore(memory, (call) => refused.has(call));
  let outage = false;
  const leases = new Set<PolicyLease<Ctx>>();
  const items = new Set<string>();
  const fedBack = new Set<string>();
  let nextId = 0;
  const gate = new PolicyGate<Ctx>({
    policy: POLICY,
    clock,
    store,
    events: {
      onDispatch: (l) => leases.add(l),
      onExpire: () => {},
      onDrain: (item) => {
        expect(items.has(item.id)).toBe(true);
        expect(fedBack.has(item.id)).toBe(false);
        fedBack.add(item.id);
        return { id: nextId++ };
      },
    },
  });

  const check = (): void => {
    const core = gate.core;
    for (const c of POLICY.classes) {
      let used = 0;
      for (const l of leases) if (l.className === c.name && l.lane === 'class') used += l.seats;
      expect(core.seats.used(c.index)).toBe(used);
    }
    // The store's truth, read past the failing wrapper.
    const backlog = memory.backlog();
    let pending = 0;
    for (const c of POLICY.classes) {
      const n = backlog.get(c.name) ?? 0;
      expect(core.defers.backlog(c.index)).toBe(n);
      pending += n;
    }
    expect(gate.deferPending).toBe(pending);
    const withLease = new Map<string, number>();
    for (const l of leases)
      if (l.deferId !== undefined) withLease.set(l.deferId, (withLease.get(l.deferId) ?? 0) + 1);
    let drainingWithoutLease = 0;
    for (const id of items) {
      const state = memory.get(id)!.state;
      const n = withLease.get(id) ?? 0;
      expect(n).toBeLessThanOrEqual(1);
      if (n === 1) expect(state).toBe('draining');
      if (state === 'draining' && n === 0) drainingWithoutLease++;
      if (state === 'draining') expect(fedBack.has(id)).toBe(true);
    }
    expect(gate.snapshot().defer_store.unrecorded_ends).toBe(drainingWithoutLease);
  };

  for (const o of ops) {
    switch (o.op) {
      case 'submit':
        for (let r = 0; r < o.repeat; r++) {
          const id = nextId++;
          const a = gate.submit(
            {
              className: o.lo ? 'lo' : 'hi',
              tenant: `t${id % 4}`,
              deadlineMs: clock.now() + o.deadlineIn,
              consequence: 'none',
              cost: { promptTokens: 100, maxOutputTokens: 100 },
            },
            { id },
          );
          if (a.kind === 'admit' || a.kind === 'degrade') leases.add(a.lease);
          if (a.kind === 'defer') items.add(a.item.id);
          if (a.kind === 'reject' && store.down) expect(a.retryAfter).toBe('unknown');
        }
        break;
      case 'release': {
        if (leases.size === 0) break;
        const all = [...leases];
        const l = all[o.pick % all.length]!;
        leases.delete(l);
        expect(gate.release(l, { outcome: o.outcome })).toBe(true);
        break;
      }
      case 'cancelDeferred': {
        const ids = [...items];
        if (ids.length === 0) break;
        const id = ids[o.pick % ids.length]!;
        const cancelled = gate.cancelDeferred(id);
        if (cancelled) expect(memory.get(id)!.state).toBe('cancelled');
        break;
      }
      case 'advance':
        clock.advance(o.ms);
        break;
      case 'outage':
        if (o.on !== outage) {
          outage = o.on;
          if (outage) store.startOutage();
          else store.endOutage();
        }
        break;
      case 'refuse':
        if (o.on) refused.add(CALLS[o.call]!);
        else refused.delete(CALLS[o.call]!);
        break;
    }
    check();
  }
  // The store answers again: everything drains and ends, no seat stays held, nothing is owed.
  if (outage) store.endOutage();
  refused.clear();
  for (let step = 0; step < 300 && (leases.size > 0 || gate.deferPending > 0); step++) {
    for (const l of [...leases]) {
      leases.delete(l);
      gate.release(l);
    }
    clock.advance(1000);
    check();
  }
  clock.advance(1000);
  check();
  for (const id of items) expect(['done', 'expired', 'cancelled']).toContain(memory.get(id)!.state);
  for (const c of POLICY.classes) expect(gate.core.seats.used(c.index)).toBe(0);
  expect(gate.snapshot().defer_store.unrecorded_ends).toBe(0);
}

describe('policy host over a randomly failing defer store', () => {
  it('never throws, never leaks a seat, never loses or feeds back an item twice; everything ends once the store answers', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 150 }), (ops) => run(ops)),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
