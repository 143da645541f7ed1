/**
 * Property tests of the policy host over random operation sequences (submit bursts, release,
 * cancel, cancel a deferred item, clock advance, health changes, policy swaps, a crash with the
 * defer store reopened), on the virtual clock. After every step: each request has exactly one
 * disposition and at most one ending; class seats stay within guarantee plus borrowing (carried
 * seats after a swap only drain); no lender below its floor; reserve only for reserve traffic;
 * no waiter past its deadline or age bound; deferred items never lost or duplicated; an intent
 * never holds two seats or places.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Policy } from './compile.js';
import { MemoryDeferStore } from './defer-memory.js';
import type { DeferredItem } from './defer-store.js';
import type { AdmissionEnvelope } from './envelope.js';
import { PolicyGate, type PolicyLease } from './host.js';
import type { PolicyWaiter } from './host-queue.js';
import { TEST_POLICY, testPolicy } from './test/policy.js';

const SEED = 20261202;
const RUNS = 120;

/** The test policy with a longer queue in `hi`, so random bursts queue, dispatch and expire. */
const TEXT = TEST_POLICY.replace(
  'queue: { max_count: 2, max_age_ms: 1000, max_cost_seats: 4 }',
  'queue: { max_count: 8, max_age_ms: 1000, max_cost_seats: 8 }',
);
const BASE = testPolicy(TEXT);
const GROWN = testPolicy(
  TEXT.replace('capacity_seats: 20', 'capacity_seats: 24').replace(
    'guaranteed_seats: 8',
    'guaranteed_seats: 12',
  ),
);
const NO_MID = testPolicy(TEXT.slice(0, TEXT.indexOf('  mid:')) + TEXT.slice(TEXT.indexOf('  lo:')));
const POLICIES: readonly Policy[] = [BASE, GROWN, NO_MID];

type Op =
  | {
      op: 'submit';
      repeat: number;
      cls: number;
      tenant: number;
      lane: 'class' | 'reserve' | 'emergency';
      out: number;
      key: number;
      deadlineIn: number;
    }
  | { op: 'release'; pick: number; outcome: 'completed' | 'failed' | 'cancelled' }
  | { op: 'cancel'; pick: number }
  | { op: 'cancelDeferred'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'health'; healthy: boolean }
  | { op: 'swap'; to: number }
  | { op: 'crash' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constant('submit' as const),
      repeat: fc.integer({ min: 1, max: 16 }),
      cls: fc.nat(2),
      tenant: fc.nat(9),
      lane: fc.constantFrom(
        'class' as const,
        'class' as const,
        'class' as const,
        'reserve' as const,
        'emergency' as const,
      ),
      out: fc.nat(5000),
      key: fc.integer({ min: -12, max: 6 }),
      deadlineIn: fc.oneof(fc.integer({ min: 1, max: 3000 }), fc.constant(60_000)),
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
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancelDeferred' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 1500 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('health' as const), healthy: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swap' as const), to: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('crash' as const) }) },
);

interface Ctx {
  readonly id: number;
  readonly lane: 'class' | 'reserve' | 'emergency';
  readonly key: string | undefined;
}

type Fate = 'lease' | 'waiting' | 'deferred' | 'rejected' | 'released' | 'expired' | 'cancelled' | 'lost';

function run(ops: readonly Op[]): void {
  const clock = new ManualClock(0);
  let store = new MemoryDeferStore();
  let healthy = true;
  const fate = new Map<number, Fate>();
  const leases = new Set<PolicyLease<Ctx>>();
  const waiters = new Map<number, PolicyWaiter<Ctx>>();
  /** Deferred item id → the request it stands for (its idempotency key). */
  const items = new Map<string, string | undefined>();
  let nextId = 0;
  /** Seats above a class's bound carried by a swap: they may only shrink. */
  let excess = new Map<string, number>();
  let floorDeficit = 0;

  const make = (): PolicyGate<Ctx> =>
    new PolicyGate<Ctx>({
      policy: BASE,
      clock,
      store,
      conditions: () => ({ healthy }),
      events: {
        onDispatch: (l) => {
          if (l.via === 'drain') {
            expect(l.deferId).toBeDefined();
          } else {
            expect(fate.get(l.ctx.id)).toBe('waiting');
            waiters.delete(l.ctx.id);
          }
          fate.set(l.ctx.id, 'lease');
          leases.add(l);
        },
        onExpire: (ctx) => {
          expect(fate.get(ctx.id)).toBe('waiting');
          waiters.delete(ctx.id);
          fate.set(ctx.id, 'expired');
        },
        onDrain: (item: DeferredItem) => {
          expect(items.has(item.id)).toBe(true);
          const id = nextId++;
          fate.set(id, 'lease');
          return { id, lane: 'class', key: item.idempotencyKey };
        },
      },
    });
  let gate = make();
  let policy = BASE;

  const bound = (name: string): number => {
    const c = policy.byName.get(name)!;
    return c.guaranteed + c.borrowLimit;
  };
  const floorSlack = (): number => {
    // usable − seats in use − every unreached floor: never negative unless a swap carried it so.
    let gap = 0;
    for (const c of policy.classes) gap += Math.max(0, c.floor - gate.core.seats.used(c.index));
    return policy.usable - gate.core.seats.inUse - gap;
  };
  const afterSwap = (): void => {
    excess = new Map();
    for (const c of policy.classes)
      excess.set(c.name, Math.max(0, gate.core.seats.used(c.index) - bound(c.name)));
    floorDeficit = Math.max(0, -floorSlack());
  };

  const check = (): void => {
    const now = clock.now();
    const core = gate.core;
    // Seats by class from the live leases.
    for (const c of policy.classes) {
      let used = 0;
      for (const l of leases) if (l.className === c.name && l.lane === 'class') used += l.seats;
      expect(core.seats.used(c.index)).toBe(used);
      const ex = Math.min(excess.get(c.name) ?? 0, Math.max(0, used - bound(c.name)));
      excess.set(c.name, ex);
      expect(used).toBeLessThanOrEqual(bound(c.name) + ex);
    }
    floorDeficit = Math.min(floorDeficit, Math.max(0, -floorSlack()));
    expect(floorSlack()).toBeGreaterThanOrEqual(-floorDeficit);
    // Reserve seats only for reserve traffic.
    let reserve = 0;
    for (const l of leases) {
      if (l.lane === 'reserve') reserve += l.seats;
      expect(l.lane === 'reserve').toBe(l.ctx.lane === 'reserve');
    }
    expect(core.seats.reserveUsed).toBe(reserve);
    // No waiter past its deadline or age bound (one enqueued this instant may expire this instant).
    expect(gate.waiting).toBe(waiters.size);
    for (const w of waiters.values()) {
      expect(w.waiting).toBe(true);
      expect(w.expiresAtMs > now || w.enqueuedAtMs === now).toBe(true);
    }
    // Deferred items: the store's pending ones are the gate's backlog; each draining one has one lease.
    let pending = 0;
    const drainingLeases = new Map<string, number>();
    for (const l of leases)
      if (l.deferId !== undefined) drainingLeases.set(l.deferId, (drainingLeases.get(l.deferId) ?? 0) + 1);
    for (const id of items.keys()) {
      const rec = store.get(id);
      expect(rec).toBeDefined();
      if (rec!.state === 'pending') pending++;
      const n = drainingLeases.get(id) ?? 0;
      expect(n).toBe(rec!.state === 'draining' ? 1 : 0);
    }
    expect(gate.deferPending).toBe(pending);
    let backlog = 0;
    for (const v of store.backlog().values()) backlog += v;
    expect(backlog).toBe(pending);
    // An intent holds at most one seat or place.
    const holders = new Map<string, number>();
    const hold = (k: string | undefined) => {
      if (k !== undefined) holders.set(k, (holders.get(k) ?? 0) + 1);
    };
    for (const l of leases) hold(l.idempotencyKey);
    for (const w of waiters.values()) hold(w.ctx.key);
    for (const [id, k] of items) if (store.get(id)!.state === 'pending') hold(k);
    for (const v of holders.values()) expect(v).toBeLessThanOrEqual(1);
    // Exactly one disposition per request, counted once (scorecard across swaps and cores).
    const snap = gate.snapshot();
    const t = snap.totals;
    expect(t.admitted + t.queued + t.degraded + t.deferred + t.rejected).toBe(t.offered);
  };

  let offered = 0;
  for (const o of ops) {
    switch (o.op) {
      case 'submit':
        for (let r = 0; r < o.repeat; r++) {
          const c = policy.classes[o.cls % policy.classes.length]!;
          const key = o.key < 0 ? undefined : `k${o.key}`;
          const id = nextId++;
          const env: AdmissionEnvelope = {
            className: c.name,
            tenant: `t${(o.tenant + r) % 10}`,
            deadlineMs: clock.now() + o.deadlineIn,
            consequence: 'none',
            cost: { promptTokens: 100, maxOutputTokens: o.out },
            ...(key !== undefined ? { idempotencyKey: key } : {}),
            ...(o.lane !== 'class' ? { lane: o.lane } : {}),
          };
          const ctx: Ctx = { id, lane: o.lane, key };
          const a = gate.submit(env, ctx, { healthy, availablePools: new Set(['small']) });
          offered++;
          expect(fate.has(id)).toBe(false);
          switch (a.kind) {
            case 'admit':
            case 'degrade':
              fate.set(id, 'lease');
              leases.add(a.lease);
              break;
            case 'queue':
              fate.set(id, 'waiting');
              waiters.set(id, a.waiter);
              break;
            case 'defer':
              fate.set(id, 'deferred');
              expect(items.has(a.item.id)).toBe(false);
              items.set(a.item.id, key);
              break;
            case 'reject':
              fate.set(id, 'rejected');
              break;
          }
          check();
        }
        break;
      case 'release': {
        if (leases.size === 0) break;
        const all = [...leases];
        const l = all[o.pick % all.length]!;
        leases.delete(l);
        expect(gate.release(l, { outcome: o.outcome })).toBe(true);
        expect(gate.release(l, { outcome: o.outcome })).toBe(false);
        fate.set(l.ctx.id, 'released');
        break;
      }
      case 'cancel': {
        if (waiters.size === 0) break;
        const all = [...waiters.values()];
        const w = all[o.pick % all.length]!;
        waiters.delete(w.ctx.id);
        expect(gate.cancel(w)).toBe(true);
        expect(gate.cancel(w)).toBe(false);
        fate.set(w.ctx.id, 'cancelled');
        break;
      }
      case 'cancelDeferred': {
        const ids = [...items.keys()];
        if (ids.length === 0) break;
        const id = ids[o.pick % ids.length]!;
        const wasPending = store.get(id)!.state === 'pending';
        expect(gate.cancelDeferred(id)).toBe(wasPending);
        break;
      }
      case 'advance':
        clock.advance(o.ms);
        break;
      case 'health':
        healthy = o.healthy;
        gate.pump();
        break;
      case 'swap':
        policy = POLICIES[o.to]!;
        gate.swap(policy);
        afterSwap();
        break;
      case 'crash': {
        // Everything in flight is lost with the process; the store keeps what it made durable.
        gate.close();
        for (const l of leases) fate.set(l.ctx.id, 'lost');
        leases.clear();
        waiters.clear();
        store = store.reopen();
        offered = 0; // a new process, a new scorecard
        policy = BASE;
        gate = make();
        afterSwap();
        break;
      }
    }
    check();
  }
  expect(gate.snapshot().totals.offered).toBe(offered);
  // Never lost: healthy, releasing everything, every deferred item ends (done, expired or cancelled).
  healthy = true;
  for (let step = 0; step < 200 && (leases.size > 0 || gate.deferPending > 0 || gate.waiting > 0); step++) {
    for (const l of [...leases]) {
      leases.delete(l);
      gate.release(l);
    }
    clock.advance(1000);
    check();
  }
  for (const id of items.keys()) expect(['done', 'expired', 'cancelled']).toContain(store.get(id)!.state);
}

describe('policy host properties over random operation sequences', () => {
  it('one disposition each; seats, floors and reserve within bounds across swaps; no expired waiter; deferred items never lost or duplicated; no double seat', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 150 }), (ops) => run(ops)),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
