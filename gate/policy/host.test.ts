import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryDeferStore } from './defer-memory.js';
import type { DeferredItem } from './defer-store.js';
import { PolicyGate, type PolicyGateEvents, type PolicyLease, type QueueExit } from './host.js';
import { env, testPolicy } from './test/policy.js';

interface Ctx {
  readonly id: string;
}

/** A host that records every callback. */
function host(text?: string, store = new MemoryDeferStore()) {
  const clock = new ManualClock(1_000_000);
  const dispatched: PolicyLease<Ctx>[] = [];
  const expired: [string, QueueExit][] = [];
  const drained: DeferredItem[] = [];
  const deferExpired: DeferredItem[] = [];
  let healthy = true;
  const events: PolicyGateEvents<Ctx> = {
    onDispatch: (l) => dispatched.push(l),
    onExpire: (ctx, why) => expired.push([ctx.id, why]),
    onDrain: (item) => {
      drained.push(item);
      return { id: `drain:${item.id}` };
    },
    onDeferExpire: (item) => deferExpired.push(item),
    deferPayload: (ctx) => new TextEncoder().encode(ctx.id),
  };
  const gate = new PolicyGate<Ctx>({
    policy: testPolicy(text),
    clock,
    events,
    store,
    conditions: () => ({ healthy }),
  });
  return {
    gate,
    clock,
    store,
    dispatched,
    expired,
    drained,
    deferExpired,
    setHealthy: (h: boolean) => {
      healthy = h;
    },
  };
}

describe('PolicyGate', () => {
  it('admits with a lease and releases it once', () => {
    const h = host();
    const a = h.gate.submit(env('hi', 't1', h.clock.now()), { id: 'r1' });
    expect(a.kind).toBe('admit');
    if (a.kind !== 'admit') return;
    expect(a.lease.ctx.id).toBe('r1');
    expect(h.gate.core.seats.used(0)).toBe(1);
    expect(h.gate.release(a.lease)).toBe(true);
    expect(h.gate.release(a.lease)).toBe(false);
    expect(h.gate.core.seats.used(0)).toBe(0);
  });

  it('dispatches a queued request when a seat frees and expires one exactly at its age bound', () => {
    const h = host();
    const now = h.clock.now();
    const leases: PolicyLease<Ctx>[] = [];
    // hi: 8 guaranteed + 4 borrowable from lo's lendable 3; tenant quota 4 → use many tenants.
    for (let i = 0; i < 20; i++) {
      const a = h.gate.submit(env('hi', `t${i}`, now), { id: `a${i}` });
      if (a.kind === 'admit') leases.push(a.lease);
      else {
        expect(a.kind).toBe('queue');
        break;
      }
    }
    expect(h.gate.waiting).toBe(1);
    const q2 = h.gate.submit(env('hi', 'tq', now), { id: 'q2' });
    expect(q2.kind).toBe('queue');
    h.gate.release(leases[0]!);
    expect(h.dispatched.map((l) => l.ctx.id)).toHaveLength(1);
    expect(h.gate.waiting).toBe(1);
    h.clock.advance(999);
    expect(h.expired).toEqual([]);
    h.clock.advance(1);
    expect(h.expired).toEqual([['q2', 'max_age']]);
    expect(h.gate.waiting).toBe(0);
  });

  it('defers into the store with the host payload, then drains at the pace only while healthy, through the seat rules', () => {
    const h = host();
    const now = h.clock.now();
    const lo: PolicyLease<Ctx>[] = [];
    for (const t of ['l1', 'l2']) {
      const a = h.gate.submit(env('lo', t, now), { id: t });
      if (a.kind !== 'admit') throw new Error(a.kind);
      lo.push(a.lease);
    }
    const d = h.gate.submit(env('lo', 'd1', now, { deadlineInMs: 60_000 }), { id: 'd1' });
    expect(d.kind).toBe('defer');
    if (d.kind !== 'defer') return;
    expect(new TextDecoder().decode(h.store.get(d.item.id)!.item.payload)).toBe('d1');
    expect(h.store.get(d.item.id)!.state).toBe('pending');
    expect(h.gate.deferPending).toBe(1);
    // Full class: nothing drains however long we wait.
    h.clock.advance(5000);
    expect(h.drained).toEqual([]);
    h.setHealthy(false);
    h.gate.release(lo[0]!);
    h.clock.advance(5000);
    expect(h.drained).toEqual([]);
    h.setHealthy(true);
    h.clock.advance(999);
    expect(h.drained).toEqual([]);
    h.clock.advance(200);
    expect(h.drained.map((i) => i.id)).toEqual([d.item.id]);
    expect(h.store.get(d.item.id)!.state).toBe('draining');
    const fed = h.dispatched.at(-1)!;
    expect(fed.via).toBe('drain');
    expect(fed.ctx.id).toBe(`drain:${d.item.id}`);
    expect(h.gate.core.seats.used(2)).toBe(6);
    h.gate.release(fed, { outcome: 'completed', status: 200 });
    expect(h.store.get(d.item.id)).toMatchObject({ state: 'done', resultStatus: 200 });
    expect(h.gate.deferPending).toBe(0);
    expect(h.gate.snapshot().classes.lo).toMatchObject({ deferred: 1, drained: 1, completed: 2 });
  });

  it("hands a drained item's answer (status, body, content type) to the store as it releases", () => {
    const h = host();
    const now = h.clock.now();
    const lo: PolicyLease<Ctx>[] = [];
    for (const t of ['l1', 'l2']) {
      const a = h.gate.submit(env('lo', t, now), { id: t });
      if (a.kind !== 'admit') throw new Error(a.kind);
      lo.push(a.lease);
    }
    const d = h.gate.submit(env('lo', 'd1', now, { deadlineInMs: 60_000 }), { id: 'd1' });
    if (d.kind !== 'defer') throw new Error(d.kind);
    h.gate.release(lo[0]!);
    h.clock.advance(1200);
    const fed = h.dispatched.at(-1)!;
    expect(fed.deferId).toBe(d.item.id);
    const body = new TextEncoder().encode('{"answer":42}');
    h.gate.release(fed, {
      outcome: 'completed',
      status: 201,
      result: { body, contentType: 'application/json' },
    });
    expect(h.store.get(d.item.id)).toMatchObject({ state: 'done', resultStatus: 201 });
    const kept = h.store.result(d.item.id);
    expect(kept?.status).toBe(201);
    expect(kept?.contentType).toBe('application/json');
    expect(new TextDecoder().decode(kept?.body)).toBe('{"answer":42}');
    // The store kept a copy: the host may reuse its buffer.
    body.fill(0);
    expect(new TextDecoder().decode(h.store.result(d.item.id)?.body)).toBe('{"answer":42}');
  });

  it('expires a deferred item past its deadline instead of feeding it back', () => {
    const h = host();
    const now = h.clock.now();
    for (const t of ['l1', 'l2']) h.gate.submit(env('lo', t, now), { id: t });
    const d = h.gate.submit(env('lo', 'd1', now, { deadlineInMs: 2000 }), { id: 'd1' });
    if (d.kind !== 'defer') throw new Error(d.kind);
    h.clock.advance(2100);
    expect(h.deferExpired.map((i) => i.id)).toEqual([d.item.id]);
    expect(h.store.get(d.item.id)!.state).toBe('expired');
    expect(h.gate.deferPending).toBe(0);
    expect(h.gate.core.defers.backlog(2)).toBe(0);
  });

  it('drains the pending items of a reopened store, including those draining at the crash, once each', () => {
    const store = new MemoryDeferStore();
    const h = host(undefined, store);
    const now = h.clock.now();
    const lo: PolicyLease<Ctx>[] = [];
    for (const t of ['l1', 'l2']) {
      const a = h.gate.submit(env('lo', t, now), { id: t });
      if (a.kind === 'admit') lo.push(a.lease);
    }
    const ids: string[] = [];
    for (const t of ['d1', 'd2']) {
      const d = h.gate.submit(env('lo', t, now, { deadlineInMs: 60_000 }), { id: t });
      if (d.kind !== 'defer') throw new Error(d.kind);
      ids.push(d.item.id);
    }
    h.gate.release(lo[0]!);
    h.clock.advance(1100);
    expect(h.drained.map((i) => i.id)).toEqual([ids[0]]);
    // Crash mid-drain: d1 draining, d2 pending.
    h.gate.close();
    const reopened = store.reopen();
    expect(reopened.backlog().get('lo')).toBe(2);
    const h2 = host(undefined, reopened);
    expect(h2.gate.deferPending).toBe(2);
    h2.clock.advance(1100);
    expect(h2.drained.map((i) => i.id)).toEqual([ids[0]]);
    h2.clock.advance(1100);
    expect(h2.drained.map((i) => i.id)).toEqual(ids);
    for (const l of [...h2.dispatched]) h2.gate.release(l);
    expect(ids.map((id) => reopened.get(id)!.state)).toEqual(['done', 'done']);
  });

  it('a refused defer (the store fails) is a reject counted as such, leaving the backlog as it was', () => {
    const store = new MemoryDeferStore();
    const h = host(undefined, store);
    const now = h.clock.now();
    for (const t of ['l1', 'l2']) h.gate.submit(env('lo', t, now), { id: t });
    store.close();
    const d = h.gate.submit(env('lo', 'd1', now), { id: 'd1' });
    expect(d).toMatchObject({ kind: 'reject', reason: 'class_capacity', retryAfter: 'unknown' });
    expect(h.gate.core.defers.backlog(2)).toBe(0);
    const s = h.gate.snapshot().classes.lo!;
    expect(s).toMatchObject({ deferred: 0, rejected: 1, defer_store_failures: 1 });
    expect(s.tenants.d1).toMatchObject({ deferred: 0, rejected: 1 });
  });

  it('surfaces a degraded mode with its lease: reduced max_tokens with seats, a fallback pool without', () => {
    const h = host();
    const now = h.clock.now();
    // mid: 4 seats, estimator 2..4 at 1000 output tokens per seat; degrade to 2000 tokens, then pool small.
    const big = { cost: { promptTokens: 0, maxOutputTokens: 4000 } };
    const a = h.gate.submit(env('mid', 'm1', now, big), { id: 'm1' });
    expect(a.kind).toBe('admit');
    const b = h.gate.submit(env('mid', 'm2', now, big), { id: 'm2' });
    expect(b).toMatchObject({ kind: 'reject' });
  });

  it('cancelling a queued request frees its place at once and it is never dispatched', () => {
    const h = host();
    const now = h.clock.now();
    const leases: PolicyLease<Ctx>[] = [];
    let waiter: Parameters<typeof h.gate.cancel>[0] | undefined;
    for (let i = 0; i < 20 && waiter === undefined; i++) {
      const a = h.gate.submit(env('hi', `t${i}`, now), { id: `a${i}` });
      if (a.kind === 'admit') leases.push(a.lease);
      else if (a.kind === 'queue') waiter = a.waiter;
    }
    expect(waiter).toBeDefined();
    expect(h.gate.core.queued('hi').count).toBe(1);
    expect(h.gate.cancel(waiter!)).toBe(true);
    expect(h.gate.cancel(waiter!)).toBe(false);
    expect(h.gate.core.queued('hi').count).toBe(0);
    h.gate.release(leases[0]!);
    expect(h.dispatched).toEqual([]);
    expect(h.gate.snapshot().classes.hi!.cancelled).toBe(1);
  });

  it('serves tenants round-robin inside a class: one tenant with many waiting cannot take every turn', () => {
    const h = host(POLICY_ONE);
    const now = h.clock.now();
    const held = h.gate.submit(env('c', 'x', now), { id: 'held' });
    if (held.kind !== 'admit') throw new Error(held.kind);
    for (const id of ['a1', 'a2', 'a3']) expect(h.gate.submit(env('c', 'A', now), { id }).kind).toBe('queue');
    expect(h.gate.submit(env('c', 'B', now), { id: 'b1' }).kind).toBe('queue');
    let lease = held.lease;
    const order: string[] = [];
    for (let k = 0; k < 4; k++) {
      h.gate.release(lease);
      lease = h.dispatched.at(-1)!;
      order.push(lease.ctx.id);
    }
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('expires a waiter exactly at its deadline when that comes before the age bound, with one timer for all', () => {
    const h = host(POLICY_ONE);
    const now = h.clock.now();
    h.gate.submit(env('c', 'x', now), { id: 'held' });
    const timersBefore = h.clock.pendingTimers;
    for (let i = 0; i < 50; i++)
      h.gate.submit(env('c', `t${i}`, now, { deadlineInMs: 300 + i }), { id: `w${i}` });
    expect(h.clock.pendingTimers - timersBefore).toBe(1);
    h.clock.advance(299);
    expect(h.expired).toEqual([]);
    h.clock.advance(1);
    expect(h.expired).toEqual([['w0', 'deadline']]);
    h.clock.advance(49);
    expect(h.expired).toHaveLength(50);
    expect(h.expired.every(([, why]) => why === 'deadline')).toBe(true);
    expect(h.gate.waiting).toBe(0);
    expect(h.gate.core.queued('c').count).toBe(0);
  });

  it('swap carries leases and waiters by class name; a lease released after the swap frees seats in the new core', () => {
    const h = host(POLICY_ONE);
    const now = h.clock.now();
    const held = h.gate.submit(env('c', 'x', now), { id: 'held' });
    if (held.kind !== 'admit') throw new Error(held.kind);
    const q = h.gate.submit(env('c', 'y', now), { id: 'q' });
    expect(q.kind).toBe('queue');
    const report = h.gate.swap(
      testPolicy(
        POLICY_ONE.replace('guaranteed_seats: 1', 'guaranteed_seats: 2').replace(
          'capacity_seats: 1',
          'capacity_seats: 2',
        ),
      ),
    );
    expect(report).toEqual({ carriedLeases: 1, unclassedLeases: 0, carriedWaiters: 1, removedWaiters: 0 });
    // The new class has two seats: the carried waiter is dispatched at once.
    expect(h.dispatched.map((l) => l.ctx.id)).toEqual(['q']);
    expect(h.gate.core.seats.used(0)).toBe(2);
    h.gate.release(held.lease);
    h.gate.release(h.dispatched[0]!);
    expect(h.gate.core.seats.used(0)).toBe(0);
    expect(h.gate.core.seats.inUse).toBe(0);
    expect(h.gate.snapshot()).toMatchObject({
      policy_swaps: 1,
      classes: { c: { offered: 2, dispatched: 1 } },
    });
  });

  it('swap to a policy without the class: its waiters leave class_removed, its leases hold seats outside every class until released', () => {
    const h = host(POLICY_ONE);
    const now = h.clock.now();
    const held = h.gate.submit(env('c', 'x', now), { id: 'held' });
    if (held.kind !== 'admit') throw new Error(held.kind);
    h.gate.submit(env('c', 'y', now), { id: 'q' });
    const other = POLICY_ONE.replaceAll(' c:', ' d:').replace('default_class: c', 'default_class: d');
    const report = h.gate.swap(testPolicy(other));
    expect(report).toEqual({ carriedLeases: 0, unclassedLeases: 1, carriedWaiters: 0, removedWaiters: 1 });
    expect(h.expired).toEqual([['q', 'class_removed']]);
    expect(h.gate.core.seats.inUse).toBe(1);
    h.gate.release(held.lease);
    expect(h.gate.core.seats.inUse).toBe(0);
  });

  it('a refused policy never reaches the host: the old one stays in force', () => {
    const h = host(POLICY_ONE);
    const before = h.gate.policy;
    expect(() => h.gate.swap(testPolicy('version: 2'))).toThrow(/version/);
    expect(h.gate.policy).toBe(before);
  });

  it('swap keeps the retry memory: an intent in flight before the swap is a duplicate after it', () => {
    const h = host(POLICY_ONE);
    const now = h.clock.now();
    const a = h.gate.submit(env('c', 'x', now, { idempotencyKey: 'k1' }), { id: 'a' });
    expect(a.kind).toBe('admit');
    h.gate.swap(testPolicy(POLICY_ONE));
    expect(h.gate.submit(env('c', 'x', now, { idempotencyKey: 'k1' }), { id: 'b' })).toMatchObject({
      kind: 'reject',
      reason: 'duplicate_intent',
    });
  });
});

/** One class of one seat, a queue of 60 requests, 1 s age bound: for queue order and expiry tests. */
const POLICY_ONE = `version: 1
capacity_seats: 1
classes:
  c:
    priority: 10
    guaranteed_seats: 1
    queue: { max_count: 60, max_age_ms: 1000, max_cost_seats: 60 }
    deadline: { default_ms: 5000 }
envelope: { default_class: c }
`;
