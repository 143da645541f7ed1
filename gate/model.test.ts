/**
 * Property-based model test: random sequences of arrivals, releases,
 * disconnects, clock advances, telemetry, endpoint flaps, runtime replaces
 * and maintenance toggles, with the gate's invariants checked after every
 * step and at every admission.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Harness, KEY, rule } from '../test/gate-harness.js';
import { REASON_INDEX } from './decisions.js';
import type { Leg, Permit } from './permit.js';
import type { GrantOutcome, Pool, Ticket } from './pool.js';
import type { Waiter } from './queue.js';

const ENDPOINTS = [
  { endpointIP: '198.51.100.11', targetPort: 8000, weight: 2 },
  { endpointIP: '198.51.100.12', targetPort: 8000, weight: 1 },
  { endpointIP: '198.51.100.21', targetPort: 8000, role: 'prefill' },
  { endpointIP: '198.51.100.31', targetPort: 8000, role: 'decode' },
];
const TENANTS = [undefined, 'a', 'b', 'c', 'd'];

type Cmd =
  | { t: 'arrive'; kind: 'http1' | 'h2' | 'pd' | 'noninf'; tenant: number; buffered: boolean }
  | { t: 'release'; i: number }
  | { t: 'cancelQueued'; i: number }
  | { t: 'firstToken'; i: number }
  | { t: 'advance'; ms: number }
  | { t: 'telemetry'; ep: number; waiting: number }
  | { t: 'health'; ep: number; up: boolean }
  | { t: 'replace'; fields: Record<string, unknown> }
  | { t: 'invalid'; fields: Record<string, unknown> }
  | { t: 'recreate'; weight: number }
  | { t: 'maintenance'; on: boolean }
  | { t: 'answer'; a: GrantOutcome };

const gateFields = fc.record(
  {
    fc_mode: fc.constantFrom('enforce', 'enforce', 'enforce', 'observe', 'off', 'inherit'),
    fc_max_outstanding: fc.integer({ min: 0, max: 6 }),
    fc_ep_max_inflight: fc.integer({ min: 0, max: 4 }),
    fc_prefill_max_inflight: fc.integer({ min: 0, max: 2 }),
    fc_decode_max_inflight: fc.integer({ min: 0, max: 2 }),
    fc_max_queue_depth: fc.integer({ min: 0, max: 5 }),
    fc_max_queue_wait_ms: fc.constantFrom(300, 700, 1500, 4000),
    fc_adaptive: fc.constantFrom('on', 'off'),
    fc_ttft_target_ms: fc.constantFrom(0, 300),
    fc_telemetry_stale_ms: fc.constantFrom(2000, 30000),
    fc_warmup_ms: fc.constantFrom(0, 3000),
    fc_tenant_max_share_pct: fc.constantFrom(0, 30, 50, 100),
  },
  { requiredKeys: [] },
);

const invalidFields = fc.constantFrom<Record<string, unknown>>(
  { fc_max_outstanding: null },
  { fc_max_outstanding: 100001 },
  { fc_max_queue_depth: 65537 },
  { fc_mode: 'sometimes' },
  { fc_max_queue_depth: 3, fc_max_queue_wait_ms: 0 },
  { fc_tenant_max_share_pct: 101 },
  { fc_unknown: 1 },
);

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      t: fc.constant('arrive' as const),
      kind: fc.constantFrom('http1', 'http1', 'http1', 'h2', 'pd', 'noninf'),
      tenant: fc.integer({ min: 0, max: TENANTS.length - 1 }),
      buffered: fc.boolean(),
    }),
  },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('release' as const), i: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('cancelQueued' as const), i: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('firstToken' as const), i: fc.nat(50) }) },
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 1600 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('telemetry' as const),
      ep: fc.nat(3),
      waiting: fc.constantFrom(0, 0, 3),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('health' as const), ep: fc.nat(3), up: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replace' as const), fields: gateFields }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('invalid' as const), fields: invalidFields }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('recreate' as const), weight: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('maintenance' as const), on: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('answer' as const), a: fc.constantFrom('lost', 'gone') }),
  },
);

interface Req {
  id: number;
  state: 'queued' | 'executing' | 'done';
  ticket?: Ticket;
  permit?: Permit;
  legs: Leg[];
  pool: Pool;
}

/** Runs one command sequence against a fresh gate, checking invariants throughout. */
function runModel(cmds: Cmd[]): void {
  const h = new Harness();
  const fail = (msg: string): never => {
    throw new Error(msg);
  };
  h.gate.apply(
    rule(
      {
        fc_mode: 'enforce',
        fc_max_outstanding: 3,
        fc_ep_max_inflight: 2,
        fc_max_queue_depth: 3,
        fc_max_queue_wait_ms: 700,
      },
      ENDPOINTS,
    ),
  );
  const reqs: Req[] = [];
  const byContext = new Map<number, Req>();
  let nextId = 0;
  let weight = 2;
  let lostThisSweep = false;
  /** Per pool: admissions that did not come from its queue. */
  const direct = new Map<Pool, number>();
  const bump = (p: Pool) => direct.set(p, (direct.get(p) ?? 0) + 1);

  const checkAdmission = (pool: Pool, p: Permit, fromQueue: boolean) => {
    if (pool.cfg.mode !== 'enforce' || !p.tracked) return;
    if (pool.effective > 0 && pool.inflight > pool.effective && !fromQueue) {
      fail(`admitted over the ceiling: ${pool.inflight} > ${pool.effective}`);
    }
    if (p.slot && p.slot.exec > pool.tenantExecBound) fail(`tenant ${p.slot.key} admitted past its share`);
    const ep = p.endpoint;
    if (ep && !fromQueue) {
      const cap = pool.capOf(ep);
      if (cap > 0 && ep.inflight > cap)
        fail(`admitted over the endpoint ceiling ${ep.id}: ${ep.inflight} > ${cap}`);
    }
  };

  // The host: grants and endings land on the model.
  const origGrant = h.onGrant;
  h.onGrant = (ticket, permit) => {
    origGrant?.(ticket, permit);
    const r = byContext.get(ticket.context as number)!;
    const pool = r.pool;
    if (h.clock.now() >= ticket.deadlineMs) fail('admitted after its deadline');
    if (pool.cfg.mode === 'enforce' && permit.tracked) {
      if (pool.effective > 0 && pool.inflight > pool.effective) fail('grant over the ceiling');
      if (permit.slot && permit.slot.exec > pool.tenantExecBound) fail('grant past the tenant share');
      // FIFO among eligible waiters: an older waiter still queued must have been unable to run,
      // its tenant at its share, or (when a P/D request went ahead) lacking an endpoint with room.
      const g = ticket as Waiter;
      const bound = pool.tenantExecBound;
      for (let w: Waiter | null = pool.queue.head; w; w = w.next) {
        if (w.seq >= g.seq) break;
        const execBefore = w.slot.exec - (w.slot === g.slot ? 1 : 0);
        const tenantBlocked = execBefore >= bound;
        const endpointBlocked = !w.pd && g.pd;
        if (!tenantBlocked && !endpointBlocked) fail(`waiter ${w.seq} was passed over by ${g.seq}`);
      }
    }
    const answer = h.answers[0] ?? 'taken';
    if (answer === 'lost') lostThisSweep = true;
    if (answer === 'taken') {
      r.state = 'executing';
      r.permit = permit;
    } else if (answer === 'gone') {
      r.state = 'done';
    }
  };
  const endingsBefore = () => h.endings.length;
  let seenEndings = 0;
  const absorbEndings = () => {
    for (let i = seenEndings; i < endingsBefore(); i++) {
      const r = byContext.get(h.endings[i]!.ticket.context as number)!;
      if (r.state !== 'queued') fail(`request ${r.id} ended twice (${r.state})`);
      r.state = 'done';
    }
    seenEndings = endingsBefore();
  };
  const release = (r: Req) => {
    for (const l of r.legs) l.close();
    r.permit!.release();
    r.state = 'done';
  };

  for (const c of cmds) {
    const pool = h.pool;
    switch (c.t) {
      case 'arrive': {
        const id = nextId++;
        const r: Req = { id, state: 'done', legs: [], pool };
        byContext.set(id, r);
        reqs.push(r);
        const d = h.admit(
          {
            inference: c.kind !== 'noninf',
            protocol: c.kind === 'h2' ? 'h2' : 'http1',
            pd: c.kind === 'pd',
            tenant: TENANTS[c.tenant],
            bodyBuffered: c.buffered,
          },
          id,
        );
        if (d.kind === 'admit') {
          r.state = 'executing';
          r.permit = d.permit;
          checkAdmission(pool, d.permit, false);
          // A P/D request under enforce whose leg is refused counts as that refusal, not as admitted.
          let legRefused = false;
          if (c.kind === 'pd') {
            for (const role of ['prefill', 'decode'] as const) {
              const leg = d.permit.openLeg(role);
              if ('status' in leg) {
                legRefused = pool.cfg.mode === 'enforce';
                release(r);
                break;
              }
              r.legs.push(leg);
            }
          }
          if (!legRefused) bump(pool);
        } else if (d.kind === 'queued') {
          r.state = 'queued';
          r.ticket = d.ticket;
          if (pool.queue.length > pool.cfg.queueDepth)
            fail(`queued ${pool.queue.length} over depth ${pool.cfg.queueDepth}`);
        }
        break;
      }
      case 'release': {
        const live = reqs.filter((r) => r.state === 'executing');
        if (live.length > 0) release(live[c.i % live.length]!);
        break;
      }
      case 'cancelQueued': {
        const q = reqs.filter((r) => r.state === 'queued');
        if (q.length > 0) {
          const r = q[c.i % q.length]!;
          h.gate.cancel(KEY, r.ticket!);
          if (r.pool === h.pool) {
            r.state = 'done';
          }
        }
        break;
      }
      case 'firstToken': {
        const live = reqs.filter((r) => r.state === 'executing');
        if (live.length > 0) live[c.i % live.length]!.permit!.firstDataEvent();
        break;
      }
      case 'advance': {
        const to = h.clock.now() + c.ms;
        const sweep = (Math.floor(h.clock.now() / 1000) + 1) * 1000;
        if (sweep <= to) {
          lostThisSweep = false;
          h.clock.advanceTo(sweep);
          absorbEndings();
          if (!lostThisSweep && h.pool.hasRunnableWaiter()) fail('a free unit idles past a sweep');
        }
        h.clock.advanceTo(to);
        break;
      }
      case 'telemetry':
        h.gate.reportEngine(KEY, pool.endpoints[c.ep]!.id, c.waiting);
        break;
      case 'health':
        h.gate.setEndpointHealth(KEY, pool.endpoints[c.ep]!.id, c.up);
        break;
      case 'replace':
        try {
          h.gate.apply(rule(c.fields, withWeight(weight)));
        } catch (e) {
          if (!String(e).includes('depth needs a wait window')) throw e;
        }
        break;
      case 'invalid': {
        const before = JSON.stringify(h.gate.rules());
        expect(() => h.gate.apply(rule(c.fields, withWeight(weight)))).toThrow();
        expect(JSON.stringify(h.gate.rules())).toBe(before);
        break;
      }
      case 'recreate':
        weight = c.weight === weight ? weight + 1 : c.weight;
        h.gate.apply(rule({}, withWeight(weight)));
        break;
      case 'maintenance':
        h.gate.setMaintenance(c.on);
        break;
      case 'answer':
        h.answers.push(c.a);
        break;
    }
    absorbEndings();
    // After every step: the books balance for the live pool.
    const p = h.pool;
    const onPool = reqs.filter((r) => r.pool === p || (r.permit && r.permit.owner === p));
    const executing = onPool.filter(
      (r) => r.state === 'executing' && r.permit!.owner === p && r.permit!.tracked,
    ).length;
    if (p.inflight !== executing) fail(`inflight ${p.inflight} != executing ${executing}`);
    const queued = reqs.filter((r) => r.state === 'queued' && r.pool === p).length;
    if (p.queue.length !== queued) fail(`queue ${p.queue.length} != model ${queued}`);
    const d = p.decisions;
    // Waiters granted a turn as P/D requests are counted admitted when a decode leg opens or they end.
    const pending = onPool.filter((r) => r.state === 'executing' && r.permit!.admitCountPending).length;
    const fromQueue = d[REASON_INDEX.admitted]! + pending - (direct.get(p) ?? 0);
    const left =
      fromQueue + d[REASON_INDEX.queue_timeout]! + d[REASON_INDEX.cancelled]! + d[REASON_INDEX.drained]!;
    if (d[REASON_INDEX.queued]! !== left + p.queue.length) fail('queued does not balance');
    // Each tenant slot holds exactly its executing and waiting requests, and none is kept empty.
    let slotExec = 0;
    let slotQueued = 0;
    for (const slot of p.tenants.inUse()) {
      if (!slot.overflow && slot.exec === 0 && slot.queued === 0)
        fail(`tenant slot ${slot.key} kept while empty`);
      slotExec += slot.exec;
      slotQueued += slot.queued;
    }
    const slotted = onPool.filter(
      (r) => r.state === 'executing' && r.permit!.owner === p && r.permit!.slot !== null,
    );
    if (slotExec !== slotted.length) fail(`tenant slots hold ${slotExec} executing, model ${slotted.length}`);
    if (slotQueued !== p.queue.length)
      fail(`tenant slots hold ${slotQueued} waiting, queue ${p.queue.length}`);
    if (h.gate.anomalies.underflow !== 0) fail('underflow');
    if (h.gate.anomalies.unknown_permit !== 0) fail('unknown_permit');
  }
  // Every request ends exactly once: drain what is left.
  h.gate.setMaintenance(true);
  for (const p of h.gate.pools()) p.pool.drainWaiters();
  absorbEndings();
  for (const r of reqs) if (r.state === 'executing') release(r);
  for (const r of reqs) if (r.state === 'queued' && r.pool !== h.pool) r.state = 'done';
  expect(reqs.filter((r) => r.state !== 'done')).toEqual([]);
  expect(h.gate.anomalies).toEqual({ underflow: 0, unknown_permit: 0, tenant_table_full: 0 });
}

function withWeight(w: number) {
  return ENDPOINTS.map((e, i) => (i === 0 ? { ...e, weight: w } : e));
}

describe('gate model', () => {
  it('keeps every invariant under random traffic, faults and reconfiguration', () => {
    fc.assert(
      fc.property(fc.array(cmd, { minLength: 20, maxLength: 120, size: 'max' }), (cmds) => {
        runModel(cmds);
      }),
      { seed: 20261130, numRuns: 600 },
    );
  });
});
