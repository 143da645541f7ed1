/**
 * Property tests of the decision core over random operation sequences (decide, release, dispatch,
 * cancel, defer drain, clock advance), on the test policy and the essay's worked example.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Policy } from './compile.js';
import { type Conditions, type Grant, PolicyCore, type QueueTicket } from './decide.js';
import type { AdmissionEnvelope } from './envelope.js';
import { parsePolicy } from './parse.js';
import { DISPOSITIONS } from './scorecard.js';
import { testPolicy } from './test/policy.js';

const SEED = 20261202;
const RUNS = 150;

type Op =
  | {
      op: 'decide';
      /** The same request shape this many times (tenants t, t+1, …): bursts reach saturation. */
      repeat: number;
      cls: number;
      tenant: number;
      lane: 'class' | 'reserve' | 'emergency';
      prompt: number;
      out: number;
      tools: number;
      key: number; // -1: none
      deadlineIn: number;
      healthy: boolean;
      pool: boolean;
    }
  | { op: 'release'; pick: number; outcome: 'completed' | 'failed' | 'cancelled' }
  | { op: 'dispatch'; pick: number; healthy: boolean }
  | { op: 'cancel'; pick: number }
  | { op: 'deferEnd'; pick: number; outcome: 'completed' | 'failed' }
  | { op: 'poolEnd'; pick: number }
  | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constant('decide' as const),
      repeat: fc.integer({ min: 1, max: 12 }),
      cls: fc.nat(7),
      tenant: fc.nat(11),
      lane: fc.constantFrom(
        'class' as const,
        'class' as const,
        'class' as const,
        'reserve' as const,
        'emergency' as const,
      ),
      prompt: fc.nat(20_000),
      out: fc.nat(6_000),
      tools: fc.nat(6),
      key: fc.integer({ min: -1, max: 5 }),
      deadlineIn: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 }), fc.constant(100_000)),
      healthy: fc.constantFrom(true, true, true, false),
      pool: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('release' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('dispatch' as const), pick: fc.nat(), healthy: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('deferEnd' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom('completed' as const, 'failed' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('poolEnd' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 3000 }) }),
  },
);

interface Held {
  grant: Grant;
  lane: AdmissionEnvelope['lane'] | 'class';
}

/** Runs `ops` against a fresh core, checking every invariant after each step. */
function run(policy: Policy, ops: readonly Op[]): void {
  const clock = new ManualClock(0);
  const core = new PolicyCore(policy, clock);
  const classes = policy.classes;
  const held: Held[] = [];
  const tickets: QueueTicket[] = [];
  const deferred: { cls: string; key: string | undefined }[] = [];
  const pooled: string[] = [];
  let decisions = 0;

  const holders = (key: string): number =>
    held.filter((h) => h.grant.idempotencyKey === key).length +
    tickets.filter((t) => t.idempotencyKey === key).length +
    deferred.filter((d) => d.key === key).length +
    pooled.filter((k) => k === key).length;

  const check = (): void => {
    // Seats by class from the grants held, against the book.
    for (const c of classes) {
      const mine = held.filter((h) => h.grant.lane === 'class' && h.grant.classIndex === c.index);
      const used = mine.reduce((s, h) => s + h.grant.seats, 0);
      expect(core.seats.used(c.index)).toBe(used);
      // Within its guarantee plus what it may borrow.
      expect(used).toBeLessThanOrEqual(c.guaranteed + c.borrowLimit);
      if (!c.borrowAllowed) expect(used).toBeLessThanOrEqual(c.guaranteed);
      // A tenant holds at most its quota (or its one first request when that costs more).
      const byTenant = new Map<string, number>();
      for (const h of mine) byTenant.set(h.grant.tenant, (byTenant.get(h.grant.tenant) ?? 0) + h.grant.seats);
      for (const v of byTenant.values())
        expect(v).toBeLessThanOrEqual(Math.max(c.tenantQuota, c.estimator.maxSeats));
    }
    const classSeats = held.filter((h) => h.grant.lane === 'class').reduce((s, h) => s + h.grant.seats, 0);
    const emergency = held.filter((h) => h.grant.lane === 'emergency').reduce((s, h) => s + h.grant.seats, 0);
    const reserve = held.filter((h) => h.grant.lane === 'reserve').reduce((s, h) => s + h.grant.seats, 0);
    expect(core.seats.inUse).toBe(classSeats + emergency);
    expect(core.seats.reserveUsed).toBe(reserve);
    expect(reserve).toBeLessThanOrEqual(policy.reserveSeats);
    expect(emergency).toBeLessThanOrEqual(policy.emergency?.maxSeats ?? 0);
    // No lender below its floor: every class can still reach its floor with the seats left.
    for (const c of classes) {
      const used = core.seats.used(c.index);
      let othersGap = 0;
      for (const o of classes) if (o !== c) othersGap += Math.max(0, o.floor - core.seats.used(o.index));
      expect(policy.usable - classSeats - emergency - othersGap).toBeGreaterThanOrEqual(
        Math.max(0, c.floor - used),
      );
    }
    // Reserve seats only for reserve traffic, and reserve traffic only on reserve seats.
    for (const h of held) expect(h.grant.lane === 'reserve').toBe(h.lane === 'reserve');
    // Every request has exactly one disposition, counted once.
    const score = core.score.snapshot();
    let offered = 0;
    for (const s of Object.values(score)) {
      offered += s.offered;
      expect(DISPOSITIONS.reduce((n, k) => n + s.dispositions[k], 0)).toBe(s.offered);
      for (const k of DISPOSITIONS)
        expect(Object.values(s.tenants).reduce((n, t) => n + t[k], 0)).toBe(s.dispositions[k]);
    }
    expect(offered).toBe(decisions);
    // Queue counts agree with the tickets held.
    for (const c of classes) {
      const mine = tickets.filter((t) => t.classIndex === c.index);
      expect(core.queued(c.name)).toEqual({
        count: mine.length,
        costSeats: mine.reduce((s, t) => s + t.seats, 0),
      });
      expect(mine.length).toBeLessThanOrEqual(c.queue.maxCount);
    }
  };

  for (const o of ops) {
    switch (o.op) {
      case 'decide':
        for (let r = 0; r < o.repeat; r++) {
          const c = classes[o.cls % classes.length]!;
          const key = o.key < 0 ? undefined : `k${o.key}`;
          const before = key === undefined ? 0 : holders(key);
          const envelope: AdmissionEnvelope = {
            className: c.name,
            tenant: `t${(o.tenant + r) % 12}`,
            deadlineMs: clock.now() + o.deadlineIn,
            consequence: 'none',
            cost: { promptTokens: o.prompt, maxOutputTokens: o.out, toolCalls: o.tools },
            ...(key !== undefined ? { idempotencyKey: key } : {}),
            ...(o.lane !== 'class' ? { lane: o.lane } : {}),
          };
          const cond: Conditions = {
            healthy: o.healthy,
            ...(o.pool ? { availablePools: new Set(['small', 'fallback']) } : {}),
          };
          const usedBefore = core.seats.used(c.index);
          const d = core.decide(envelope, cond);
          decisions++;
          expect(DISPOSITIONS).toContain(d.kind);
          const grant = d.kind === 'admit' ? d.grant : d.kind === 'degrade' ? d.grant : undefined;
          if (grant !== undefined) {
            held.push({ grant, lane: o.lane });
            // No borrowing while unhealthy: a class-lane admission then stays within the guarantee.
            if (!o.healthy && grant.lane === 'class')
              expect(usedBefore + grant.seats).toBeLessThanOrEqual(Math.max(c.guaranteed, usedBefore));
          }
          if (d.kind === 'queue') tickets.push(d.ticket);
          if (d.kind === 'defer') deferred.push({ cls: c.name, key });
          if (d.kind === 'degrade' && d.grant === undefined && key !== undefined) pooled.push(key);
          // Retries never double-seat: one intent has at most one holder of seats or a place in line.
          if (key !== undefined) {
            expect(holders(key)).toBeLessThanOrEqual(1);
            if (before === 1) expect(d).toMatchObject({ kind: 'reject', reason: 'duplicate_intent' });
          }
          check();
        }
        break;
      case 'release': {
        if (held.length === 0) break;
        const [h] = held.splice(o.pick % held.length, 1);
        expect(core.release(h!.grant, o.outcome)).toBe(true);
        expect(core.release(h!.grant, o.outcome)).toBe(false);
        break;
      }
      case 'dispatch': {
        if (tickets.length === 0) break;
        const i = o.pick % tickets.length;
        const t = tickets[i]!;
        const usedBefore = core.seats.used(t.classIndex);
        const out = core.dispatch(t, { healthy: o.healthy });
        if (out.kind !== 'wait') tickets.splice(i, 1);
        if (out.kind === 'dispatched') {
          held.push({ grant: out.grant, lane: 'class' });
          const c = classes[t.classIndex]!;
          if (!o.healthy)
            expect(usedBefore + t.seats).toBeLessThanOrEqual(Math.max(c.guaranteed, usedBefore));
        }
        break;
      }
      case 'cancel': {
        if (tickets.length === 0) break;
        const [t] = tickets.splice(o.pick % tickets.length, 1);
        core.cancelQueued(t!);
        break;
      }
      case 'deferEnd': {
        if (deferred.length === 0) break;
        const [d] = deferred.splice(o.pick % deferred.length, 1);
        core.deferEnded(d!.cls, d!.key, o.outcome);
        break;
      }
      case 'poolEnd': {
        if (pooled.length === 0) break;
        const [k] = pooled.splice(o.pick % pooled.length, 1);
        core.intentEnded(k!, 'completed');
        break;
      }
      case 'advance':
        clock.advance(o.ms);
        break;
    }
    check();
  }
}

const worked = parsePolicy(
  readFileSync(join(import.meta.dirname, 'fixtures', 'worked-example.yaml'), 'utf8'),
  'worked-example.yaml',
);
const small = testPolicy();

describe('policy core properties over random operation sequences', () => {
  for (const [name, policy] of [
    ['the test policy', small],
    ['the worked example', worked],
  ] as const) {
    it(`keeps seats within class, borrowing, floor, reserve and emergency bounds; one disposition each; no double seat (${name})`, () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 250 }), (ops) => run(policy, ops)),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }
});
