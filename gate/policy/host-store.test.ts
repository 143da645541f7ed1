/**
 * The policy host over a defer store that throws (FailingDeferStore around the memory store): it
 * refuses defers honestly, its drain stops and retries instead of crashing, and no item is lost,
 * fed back twice or left holding seats, whether the store dies mid-drain, between claim and
 * finish, or for a whole window.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryDeferStore } from './defer-memory.js';
import { type DeferStoreCall, FailingDeferStore } from './defer-outage.js';
import type { DeferredItem } from './defer-store.js';
import { PolicyGate, type PolicyLease } from './host.js';
import { env, testPolicy } from './test/policy.js';

interface Ctx {
  readonly id: string;
}

/** A host over a failing store; `failing` holds the calls refused besides an outage. */
function host() {
  const clock = new ManualClock(1_000_000);
  const memory = new MemoryDeferStore();
  const failing = new Set<DeferStoreCall>();
  const store = new FailingDeferStore(memory, (call) => failing.has(call));
  const dispatched: PolicyLease<Ctx>[] = [];
  const drained: string[] = [];
  const deferExpired: DeferredItem[] = [];
  const gate = new PolicyGate<Ctx>({
    policy: testPolicy(),
    clock,
    store,
    events: {
      onDispatch: (l) => dispatched.push(l),
      onExpire: () => {},
      onDrain: (item) => {
        drained.push(item.id);
        return { id: `drain:${item.id}` };
      },
      onDeferExpire: (item) => deferExpired.push(item),
    },
  });
  /** lo (class index 2, 3 seats each, 6 guaranteed): two admitted, then `n` deferred. */
  const fill = (n: number, deadlineInMs = 60_000): { lo: PolicyLease<Ctx>[]; ids: string[] } => {
    const now = clock.now();
    const lo: PolicyLease<Ctx>[] = [];
    for (const t of ['l1', 'l2']) {
      const a = gate.submit(env('lo', t, now), { id: t });
      if (a.kind !== 'admit') throw new Error(a.kind);
      lo.push(a.lease);
    }
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const d = gate.submit(env('lo', `d${i}`, now, { deadlineInMs }), { id: `d${i}` });
      if (d.kind !== 'defer') throw new Error(d.kind);
      ids.push(d.item.id);
    }
    return { lo, ids };
  };
  const drainLeases = (): PolicyLease<Ctx>[] => dispatched.filter((l) => l.via === 'drain');
  return { gate, clock, memory, store, failing, dispatched, drained, deferExpired, fill, drainLeases };
}

describe('PolicyGate over a failing defer store', () => {
  it('the store dies mid-drain (pending answers, claim throws): the seats go back, the item stays pending and counted, and drains once when it answers', () => {
    const h = host();
    const { lo, ids } = h.fill(2);
    h.gate.release(lo[0]!);
    h.failing.add('claim');
    // The tick at 1.1 s has a drain token: its claim throws, and that tick is the last one run.
    expect(() => h.clock.advance(1100)).not.toThrow();
    expect(h.gate.snapshot().defer_store.stopped_drains).toBe(1);
    expect(h.gate.core.defers.backlog(2)).toBe(2);
    expect(h.gate.core.seats.used(2)).toBe(3);
    expect(() => h.clock.advance(1900)).not.toThrow();
    expect(h.drained).toEqual([]);
    expect(h.gate.core.seats.used(2)).toBe(3);
    expect(h.gate.deferPending).toBe(2);
    expect(h.gate.core.defers.backlog(2)).toBe(2);
    expect(ids.map((id) => h.memory.get(id)!.state)).toEqual(['pending', 'pending']);
    const down = h.gate.snapshot().defer_store;
    expect(down.failures).toBeGreaterThanOrEqual(2);
    expect(down.stopped_drains).toBeGreaterThanOrEqual(2);
    expect(down.unrecorded_ends).toBe(0);

    h.failing.clear();
    h.clock.advance(1100);
    expect(h.drained).toEqual([ids[0]]);
    h.gate.release(lo[1]!);
    h.clock.advance(1100);
    expect(h.drained).toEqual(ids);
    for (const l of h.drainLeases()) h.gate.release(l);
    expect(ids.map((id) => h.memory.get(id)!.state)).toEqual(['done', 'done']);
    expect(h.gate.core.seats.used(2)).toBe(0);
    expect(h.gate.leases).toBe(0);
    expect(h.gate.deferPending).toBe(0);
    expect(h.gate.snapshot().classes.lo!.drained).toBe(2);
  });

  it('the store dies between claim and finish: the release frees the seats, the end is written once it answers, and the item is never fed back again', () => {
    const h = host();
    const { lo, ids } = h.fill(1);
    h.gate.release(lo[0]!);
    h.clock.advance(1100);
    expect(h.drained).toEqual(ids);
    h.store.startOutage();
    const [fed] = h.drainLeases();
    expect(h.gate.release(fed!, { outcome: 'completed', status: 200 })).toBe(true);
    expect(h.gate.core.seats.used(2)).toBe(3);
    expect(h.memory.get(ids[0]!)!.state).toBe('draining');
    expect(h.gate.snapshot().defer_store.unrecorded_ends).toBe(1);
    // Nothing is pending, but the drain loop keeps ticking to write the end.
    expect(() => h.clock.advance(10_000)).not.toThrow();
    expect(h.memory.get(ids[0]!)!.state).toBe('draining');

    h.store.endOutage();
    h.clock.advance(200);
    const rec = h.memory.get(ids[0]!)!;
    expect(rec.state).toBe('done');
    expect(rec.resultStatus).toBe(200);
    // The end keeps the time it happened, not the time it was written.
    expect(rec.updatedAtMs).toBe(1_001_100);
    expect(h.gate.snapshot().defer_store.unrecorded_ends).toBe(0);
    h.clock.advance(5000);
    expect(h.drained).toEqual(ids);
    h.gate.release(lo[1]!);
    expect(h.gate.core.seats.used(2)).toBe(0);
  });

  it('a store down for a window: defers are refused as class_capacity with recovery unknown, no tick throws, and what was deferred before drains after', () => {
    const h = host();
    const { lo, ids } = h.fill(1);
    h.store.startOutage();
    const r = h.gate.submit(env('lo', 'd9', h.clock.now()), { id: 'd9' });
    expect(r).toMatchObject({ kind: 'reject', reason: 'class_capacity', retryAfter: 'unknown' });
    h.gate.release(lo[0]!);
    h.gate.release(lo[1]!);
    expect(() => h.clock.advance(5000)).not.toThrow();
    expect(h.drained).toEqual([]);
    const s = h.gate.snapshot();
    expect(s.classes.lo!.defer_store_failures).toBe(1);
    expect(s.defer_store.refused_defers).toBe(1);
    expect(s.defer_store.failures).toBeGreaterThan(s.defer_store.refused_defers);
    expect(s.classes.lo!.deferred).toBe(1);

    h.store.endOutage();
    h.clock.advance(1100);
    expect(h.drained).toEqual(ids);
    for (const l of h.drainLeases()) h.gate.release(l);
    expect(h.memory.get(ids[0]!)!.state).toBe('done');
    expect(h.gate.core.seats.used(2)).toBe(0);
  });

  it('expiry and cancel on a dead store: nothing ends until it answers, then each item ends once', () => {
    const h = host();
    const { ids } = h.fill(2, 2000);
    h.store.startOutage();
    h.clock.advance(3000);
    expect(h.deferExpired).toEqual([]);
    expect(h.gate.deferPending).toBe(2);
    expect(h.gate.cancelDeferred(ids[1]!)).toBe(false);
    expect(h.memory.get(ids[1]!)!.state).toBe('pending');

    h.store.endOutage();
    h.clock.advance(200);
    expect(h.deferExpired.map((i) => i.id)).toEqual(ids);
    expect(ids.map((id) => h.memory.get(id)!.state)).toEqual(['expired', 'expired']);
    expect(h.gate.cancelDeferred(ids[1]!)).toBe(false);
    expect(h.gate.deferPending).toBe(0);
    expect(h.gate.core.defers.backlog(2)).toBe(0);
    expect(h.gate.snapshot().classes.lo!.defer_expired).toBe(2);
  });

  it('a policy swapped in while the store is down keeps the backlog counts, and re-reads them once it answers', () => {
    const h = host();
    const { lo, ids } = h.fill(2);
    h.store.startOutage();
    h.gate.swap(testPolicy());
    expect(h.gate.deferPending).toBe(2);
    expect(h.gate.core.defers.backlog(2)).toBe(2);
    h.store.endOutage();
    for (const l of lo) h.gate.release(l);
    h.clock.advance(3000);
    expect(h.drained).toEqual(ids);
    expect(h.gate.deferPending).toBe(0);
  });
});
