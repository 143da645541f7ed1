import { describe, expect, it } from 'vitest';
import type { Conditions, Disposition, Grant, PolicyCore } from './decide.js';
import { MAX_TENANTS_PER_CLASS, OTHER_TENANTS } from './scorecard.js';
import { env, TEST_POLICY, testCore } from './test/policy.js';

const UNHEALTHY: Conditions = { healthy: false };

function grantOf(d: Disposition): Grant {
  if (d.kind === 'admit') return d.grant;
  if (d.kind === 'degrade' && d.grant) return d.grant;
  throw new Error(`expected a grant, got ${JSON.stringify(d)}`);
}

/** Admits `n` requests of class `cls`, one tenant each (t0, t1, …), and returns their grants. */
function fill(
  core: PolicyCore,
  now: number,
  cls: string,
  n: number,
  cond = UNHEALTHY,
  prefix = 't',
): Grant[] {
  return Array.from({ length: n }, (_, k) => grantOf(core.decide(env(cls, `${prefix}${k}`, now), cond)));
}

describe('policy decisions: seats', () => {
  it('admits within the guarantee with the seats the estimator gives', () => {
    const { core, clock } = testCore();
    const d = core.decide(
      env('mid', 'a', clock.now(), { cost: { promptTokens: 100, maxOutputTokens: 3500 } }),
    );
    expect(d.kind).toBe('admit');
    expect(grantOf(d)).toMatchObject({ className: 'mid', seats: 4, lane: 'class' });
    expect(core.seats.used(1)).toBe(4);
  });

  it('borrows only the idle lendable seats while healthy: the lender keeps its floor', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8, {});
    // lo lends 3 of its 6 seats; mid lends none.
    const borrowed = fill(core, now, 'hi', 3, {}, 'b');
    expect(borrowed.every((g) => g.lane === 'class')).toBe(true);
    expect(core.seats.used(0)).toBe(11);
    expect(core.decide(env('hi', 'x', now)).kind).toBe('queue');
    // lo still reaches its floor of 3 …
    expect(core.decide(env('lo', 'l1', now)).kind).toBe('admit');
    // … but not its lent seats until the borrower gives them back (no preemption).
    expect(core.decide(env('lo', 'l2', now)).kind).toBe('defer');
  });

  it('does not borrow while unhealthy', () => {
    const { core, clock } = testCore();
    fill(core, clock.now(), 'hi', 8);
    expect(core.decide(env('hi', 'x', clock.now()), UNHEALTHY).kind).toBe('queue');
    expect(core.seats.used(0)).toBe(8);
  });

  it('does not borrow past its borrowing limit', () => {
    const { core, clock } = testCore(TEST_POLICY.replace('max_seats: 4 }', 'max_seats: 1 }'));
    fill(core, clock.now(), 'hi', 9, {});
    expect(core.decide(env('hi', 'x', clock.now())).kind).toBe('queue');
    expect(core.seats.used(0)).toBe(9);
  });

  it('a borrower does not take lent seats back while the lender waits below its guarantee', () => {
    const text = TEST_POLICY.replace(
      '    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }\n    deadline: { default_ms: 60000',
      '    queue: { max_count: 2, max_age_ms: 10000, max_cost_seats: 6 }\n    deadline: { default_ms: 60000',
    );
    const { core, clock } = testCore(text);
    const now = clock.now();
    fill(core, now, 'hi', 8, {});
    const borrowed = fill(core, now, 'hi', 3, {}, 'b');
    expect(core.decide(env('lo', 'l1', now)).kind).toBe('admit');
    expect(core.decide(env('lo', 'l2', now)).kind).toBe('queue');
    core.release(borrowed[0]!);
    expect(core.decide(env('hi', 'y', now)).kind).toBe('queue');
  });

  it('keeps the reserve for reserve traffic and refuses reserve traffic past it without a Retry-After', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8);
    fill(core, now, 'mid', 2, UNHEALTHY, 'm');
    fill(core, now, 'lo', 2, UNHEALTHY, 'l');
    expect(core.seats.inUse).toBe(18);
    expect(core.decide(env('mid', 'z', now), UNHEALTHY)).toMatchObject({
      kind: 'reject',
      reason: 'class_capacity',
    });
    const r1 = core.decide(env('hi', 'health', now, { lane: 'reserve' }));
    const r2 = core.decide(env('hi', 'health', now, { lane: 'reserve' }));
    expect([grantOf(r1).lane, grantOf(r2).lane]).toEqual(['reserve', 'reserve']);
    expect(core.decide(env('hi', 'health', now, { lane: 'reserve' }))).toEqual({
      kind: 'reject',
      reason: 'class_capacity',
      retryAfter: 'unknown',
      detail: 'the reserve of 2 seats is in use',
    });
    expect(core.seats.reserveUsed).toBe(2);
  });

  it('release returns the seats once; a second release changes nothing', () => {
    const { core, clock } = testCore();
    const g = grantOf(core.decide(env('lo', 'a', clock.now())));
    expect(core.seats.inUse).toBe(3);
    expect(core.release(g)).toBe(true);
    expect(core.release(g)).toBe(false);
    expect(core.seats.inUse).toBe(0);
    expect(core.seats.tenantUse(2, 'a')).toBe(0);
  });

  it('reconciles the estimate with actual use at release and records the estimator error', () => {
    const { core, clock } = testCore();
    const g = grantOf(
      core.decide(env('mid', 'a', clock.now(), { cost: { promptTokens: 100, maxOutputTokens: 4000 } })),
    );
    core.release(g, 'completed', { promptTokens: 100, outputTokens: 1500 });
    expect(core.score.snapshot().mid?.estimator).toEqual({
      reconciled: 1,
      seatErrorSum: 2,
      seatErrorAbsSum: 2,
      underestimated: 0,
      outputTokenErrorSum: 2500,
    });
  });
});

describe('policy decisions: tenants, lanes and dependencies', () => {
  it('rejects a tenant above its quota inside the class with tenant_quota and no Retry-After', () => {
    const { core, clock } = testCore();
    fill(core, clock.now(), 'hi', 1);
    for (let k = 0; k < 4; k++) expect(core.decide(env('hi', 'a', clock.now())).kind).toBe('admit');
    expect(core.decide(env('hi', 'a', clock.now()))).toMatchObject({
      kind: 'reject',
      reason: 'tenant_quota',
      retryAfter: 'unknown',
    });
  });

  it("a tenant's first request fits even when it costs more than the quota", () => {
    const { core, clock } = testCore(
      TEST_POLICY.replace('    priority: 50\n', '    priority: 50\n    tenant_max_share_pct: 25\n'),
    );
    expect(core.decide(env('mid', 'a', clock.now())).kind).toBe('admit');
    expect(core.decide(env('mid', 'a', clock.now()))).toMatchObject({ reason: 'tenant_quota' });
  });

  it('admits eligible emergency traffic past class limits, capped, recording each use, never into a floor', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8);
    const em = (t: string) =>
      core.decide(env('hi', t, now, { lane: 'emergency', eligibleBy: 'tenant list' }), UNHEALTHY);
    expect(grantOf(em('ops')).lane).toBe('emergency');
    expect(grantOf(em('ops')).lane).toBe('emergency');
    expect(em('ops').kind).toBe('queue'); // the lane's cap of 2 is reached
    expect(core.score.emergencyAudit()).toEqual([
      { atMs: now, className: 'hi', tenant: 'ops', seats: 1, eligibleBy: 'tenant list' },
      { atMs: now, className: 'hi', tenant: 'ops', seats: 1, eligibleBy: 'tenant list' },
    ]);
    // 8 + 2 emergency + mid's floor 4 + lo's floor 3 = 17 of 18: lo's lendable seats are what is left.
    fill(core, now, 'lo', 1, UNHEALTHY, 'l');
    expect(core.decide(env('mid', 'm', now), UNHEALTHY).kind).toBe('admit');
  });

  it('rejects with dependency_open, a Retry-After only when the circuit says when it retries', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    const timed = new Map([['tools', { retryAtMs: now + 2500 }]]);
    expect(core.decide(env('mid', 'a', now), { openDependencies: timed })).toMatchObject({
      kind: 'reject',
      reason: 'dependency_open',
      retryAfter: 3,
    });
    const unknown = new Map([['tools', {}]]);
    expect(core.decide(env('mid', 'a', now), { openDependencies: unknown })).toMatchObject({
      retryAfter: 'unknown',
    });
    expect(core.decide(env('hi', 'a', now), { openDependencies: unknown }).kind).toBe('admit');
  });

  it('rejects a request whose deadline has passed with deadline_impossible', () => {
    const { core, clock } = testCore();
    expect(core.decide(env('hi', 'a', clock.now(), { deadlineInMs: 0 }))).toMatchObject({
      kind: 'reject',
      reason: 'deadline_impossible',
    });
  });
});

describe('policy decisions: queue, degrade, defer', () => {
  /** hi full, one seat released then taken again so the service rate is 1 seat/s. */
  function saturatedWithRate() {
    const t = testCore();
    const now = t.clock.now();
    const grants = fill(t.core, now, 'hi', 8);
    t.core.release(grants[0]!);
    fill(t.core, now, 'hi', 1, UNHEALTHY, 'again');
    return { ...t, now, grants };
  }

  it('queues while the expected wait is unknown, within the count bound, then queue_full without a Retry-After', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8);
    const q = core.decide(env('hi', 'x', now), UNHEALTHY);
    expect(q).toMatchObject({ kind: 'queue', expectedWaitMs: undefined });
    expect(core.decide(env('hi', 'y', now), UNHEALTHY).kind).toBe('queue');
    expect(core.decide(env('hi', 'z', now), UNHEALTHY)).toMatchObject({
      kind: 'reject',
      reason: 'queue_full',
      retryAfter: 'unknown',
    });
    expect(core.queued('hi')).toEqual({ count: 2, costSeats: 2 });
  });

  it('queues only what its recent service rate lets finish before the deadline', () => {
    const { core, now } = saturatedWithRate();
    expect(core.decide(env('hi', 'x', now, { deadlineInMs: 500 }), UNHEALTHY)).toMatchObject({
      kind: 'reject',
      reason: 'deadline_impossible',
      retryAfter: 'unknown',
    });
    expect(core.decide(env('hi', 'y', now, { deadlineInMs: 1500 }), UNHEALTHY)).toMatchObject({
      kind: 'queue',
      expectedWaitMs: 1000,
    });
  });

  it('justifies a Retry-After for queue_full from the service rate, and refuses a wait past the age bound', () => {
    const { core, now } = saturatedWithRate();
    const long = { deadlineInMs: 100_000 };
    expect(core.decide(env('hi', 'x', now, long), UNHEALTHY).kind).toBe('queue');
    // The second would wait 2 s, past the queue's 1 s age bound.
    expect(core.decide(env('hi', 'y', now, long), UNHEALTHY)).toMatchObject({
      reason: 'deadline_impossible',
    });
    const roomy = testCore(TEST_POLICY.replace('max_age_ms: 1000,', 'max_age_ms: 10000,'));
    const t = roomy.clock.now();
    const grants = fill(roomy.core, t, 'hi', 8);
    roomy.core.release(grants[0]!);
    fill(roomy.core, t, 'hi', 1, UNHEALTHY, 'again');
    expect(roomy.core.decide(env('hi', 'x', t, long), UNHEALTHY).kind).toBe('queue');
    expect(roomy.core.decide(env('hi', 'y', t, long), UNHEALTHY).kind).toBe('queue');
    // Two waiting seats ahead plus its own at 1 seat/s: 3 s.
    expect(roomy.core.decide(env('hi', 'z', t, long), UNHEALTHY)).toMatchObject({
      kind: 'reject',
      reason: 'queue_full',
      retryAfter: 3,
    });
  });

  it('degrades to the declared reduced max_tokens when that fits and the full request does not', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'mid', 1, {}, 'm');
    const d = core.decide(env('mid', 'a', now, { cost: { promptTokens: 0, maxOutputTokens: 4000 } }));
    expect(d).toMatchObject({ kind: 'degrade', mode: { kind: 'max_tokens', max_output_tokens: 2000 } });
    expect(grantOf(d)).toMatchObject({ seats: 2, maxOutputTokens: 2000 });
  });

  it('degrades to a declared pool only while the host says that pool is available', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'mid', 2, {}, 'm');
    expect(core.decide(env('mid', 'a', now), { availablePools: new Set(['small']) })).toEqual({
      kind: 'degrade',
      mode: { kind: 'pool', pool: 'small' },
    });
    expect(core.decide(env('mid', 'a', now), { availablePools: new Set(['other']) })).toMatchObject({
      kind: 'reject',
      reason: 'class_capacity',
    });
  });

  it('never degrades a class that declares no fallback', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8);
    core.decide(env('hi', 'q0', now), UNHEALTHY);
    core.decide(env('hi', 'q1', now), UNHEALTHY);
    expect(
      core.decide(env('hi', 'x', now), { healthy: false, availablePools: new Set(['small']) }).kind,
    ).toBe('reject');
  });

  it('defers while the backlog has room, then rejects; the drain feeds back at its pace and only while healthy', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'lo', 2, {}, 'l');
    expect(core.decide(env('lo', 'a', now))).toEqual({
      kind: 'defer',
      className: 'lo',
      backlog: 1,
      seats: 3,
    });
    expect(core.decide(env('lo', 'b', now))).toEqual({
      kind: 'defer',
      className: 'lo',
      backlog: 2,
      seats: 3,
    });
    expect(core.decide(env('lo', 'c', now))).toMatchObject({ kind: 'reject', reason: 'class_capacity' });
    expect(core.mayDrain('lo')).toBe(false);
    clock.advance(1000);
    expect(core.mayDrain('lo', UNHEALTHY)).toBe(false);
    clock.advance(1000);
    expect(core.mayDrain('lo')).toBe(true);
    expect(core.mayDrain('lo')).toBe(false);
    core.deferEnded('lo');
    expect(core.defers.backlog(2)).toBe(1);
  });

  it('dispatches a queued request when seats free up, and expires one past its queue age', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    const grants = fill(core, now, 'hi', 8);
    const q = core.decide(env('hi', 'x', now), UNHEALTHY);
    if (q.kind !== 'queue') throw new Error('expected queue');
    expect(core.dispatch(q.ticket, UNHEALTHY).kind).toBe('wait');
    core.release(grants[0]!);
    const out = core.dispatch(q.ticket, UNHEALTHY);
    expect(out.kind).toBe('dispatched');
    expect(core.queued('hi').count).toBe(0);
    const q2 = core.decide(env('hi', 'y', now), UNHEALTHY);
    if (q2.kind !== 'queue') throw new Error('expected queue');
    clock.advance(1001);
    expect(core.dispatch(q2.ticket, UNHEALTHY)).toEqual({ kind: 'expired', why: 'max_age' });
    expect(core.queued('hi')).toEqual({ count: 0, costSeats: 0 });
  });

  it('counts every decision once under exactly one disposition', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    fill(core, now, 'hi', 8);
    core.decide(env('hi', 'x', now), UNHEALTHY);
    core.decide(env('hi', 'y', now), UNHEALTHY);
    core.decide(env('hi', 'z', now), UNHEALTHY);
    const s = core.score.snapshot().hi!;
    expect(s.offered).toBe(11);
    expect(s.dispositions).toEqual({ admit: 8, queue: 2, degrade: 0, defer: 0, reject: 1 });
    expect(s.rejected.queue_full).toBe(1);
    expect(s.tenants.z).toEqual({ admit: 0, queue: 0, degrade: 0, defer: 0, reject: 1 });
    expect(s.tenants.t0).toEqual({ admit: 1, queue: 0, degrade: 0, defer: 0, reject: 0 });
  });

  it('counts dispositions by tenant, tenants past the bound together under (other)', () => {
    const { core, clock } = testCore();
    for (let k = 0; k < MAX_TENANTS_PER_CLASS + 10; k++) {
      const d = core.decide(env('lo', `t${k}`, clock.now()));
      if (d.kind === 'admit') core.release(d.grant);
    }
    const tenants = core.score.snapshot().lo!.tenants;
    expect(Object.keys(tenants)).toHaveLength(MAX_TENANTS_PER_CLASS + 1);
    expect(tenants[OTHER_TENANTS]?.admit).toBe(10);
  });
});

describe('policy decisions: retry budgets', () => {
  it('recognises a retry of an intent in flight as a duplicate: counted, no second seat', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    const g = grantOf(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' })));
    expect(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' }))).toMatchObject({
      kind: 'reject',
      reason: 'duplicate_intent',
      detail: 'intent k is already in flight',
    });
    expect(core.seats.inUse).toBe(1);
    core.release(g, 'completed');
    expect(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' }))).toMatchObject({
      reason: 'duplicate_intent',
      detail: 'intent k is already completed',
    });
    expect(core.intents.duplicates).toBe(2);
  });

  it('lets a failed intent retry within its budget, then blocks it without a seat', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    core.release(grantOf(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' }))), 'failed');
    core.release(grantOf(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' }))), 'failed');
    expect(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' }))).toMatchObject({
      kind: 'reject',
      reason: 'retry_budget',
      retryAfter: 'unknown',
    });
    expect(core.seats.inUse).toBe(0);
    expect(core.intents.blocked).toBe(1);
    expect(core.intents.retries).toBe(1);
  });

  it('a rejected attempt spends one attempt of the budget', () => {
    const { core, clock } = testCore();
    const now = clock.now();
    expect(core.decide(env('hi', 'a', now, { idempotencyKey: 'k', deadlineInMs: 0 })).kind).toBe('reject');
    expect(core.intents.state('k')).toEqual({ attempts: 1, state: 'failed' });
    expect(core.decide(env('hi', 'a', now, { idempotencyKey: 'k' })).kind).toBe('admit');
    expect(core.intents.state('k')).toEqual({ attempts: 2, state: 'in_flight' });
  });

  it('forgets a finished intent after remember_ms', () => {
    const { core, clock } = testCore(
      TEST_POLICY.replace(
        'retry: { budget_per_intent: 2 }',
        'retry: { budget_per_intent: 2, remember_ms: 1000 }',
      ),
    );
    core.release(grantOf(core.decide(env('hi', 'a', clock.now(), { idempotencyKey: 'k' }))));
    clock.advance(1000);
    expect(core.decide(env('hi', 'a', clock.now(), { idempotencyKey: 'k' })).kind).toBe('admit');
  });
});
