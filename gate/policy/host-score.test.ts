import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Conditions } from './decide.js';
import { PolicyGate, type PolicyLease } from './host.js';
import { parsePolicy } from './parse.js';
import { env } from './test/policy.js';

/** One class `c` of one seat; `queue` sets its queue (none by default). */
const one = (queue = '{ max_count: 0, max_age_ms: 0, max_cost_seats: 0 }') =>
  parsePolicy(
    `version: 1
capacity_seats: 1
classes:
  c:
    priority: 10
    guaranteed_seats: 1
    queue: ${queue}
    deadline: { default_ms: 5000 }
envelope: { default_class: c }
`,
    'one.yaml',
  );

function gateOf(policy = one(), cond: () => Conditions = () => ({})) {
  const clock = new ManualClock(10_000);
  const dispatched: PolicyLease<string>[] = [];
  const gate = new PolicyGate<string>({
    policy,
    clock,
    conditions: cond,
    events: { onDispatch: (l) => dispatched.push(l), onExpire: () => {}, onDrain: () => undefined },
  });
  const admit = (tenant = 't', extra: Parameters<typeof env>[3] = {}): PolicyLease<string> => {
    const a = gate.submit(env('c', tenant, clock.now(), extra), tenant);
    if (a.kind !== 'admit') throw new Error(`expected admit, got ${a.kind}`);
    return a.lease;
  };
  return { gate, clock, dispatched, admit };
}

describe('policy scorecard', () => {
  it('counts useful on-time completions apart from late ones and those after a disconnect', () => {
    const { gate, clock, admit } = gateOf();
    gate.release(admit('t', { deadlineInMs: 100 }), { outcome: 'completed' });
    const late = admit('t', { deadlineInMs: 100 });
    clock.advance(101);
    gate.release(late, { outcome: 'completed' });
    gate.release(admit('u'), { outcome: 'completed', clientConnected: false });
    gate.release(admit('u'), { outcome: 'completed', useful: false });
    gate.release(admit('u'), { outcome: 'failed' });
    gate.release(admit('u'), { outcome: 'cancelled' });
    const c = gate.snapshot().classes.c!;
    expect(c).toMatchObject({
      completed: 4,
      failed: 1,
      cancelled: 1,
      useful_on_time: 1,
      completed_after_deadline: 1,
      completed_after_disconnect: 1,
    });
    expect(c.tenants.t).toMatchObject({ completed: 2, useful_on_time: 1 });
    expect(c.tenants.u).toMatchObject({ completed: 2, useful_on_time: 0, cancelled: 1 });
  });

  it('counts a false shed when seats freed before the rejected request’s deadline, a true shed otherwise', () => {
    const { gate, clock, admit } = gateOf();
    const held = admit();
    expect(gate.submit(env('c', 'a', clock.now(), { deadlineInMs: 1000 }), 'a').kind).toBe('reject');
    expect(gate.submit(env('c', 'b', clock.now(), { deadlineInMs: 100 }), 'b').kind).toBe('reject');
    expect(gate.snapshot().false_shed).toEqual({ total: 0, watching: 2, unjudged: 0 });
    clock.advance(500);
    gate.release(held);
    const s = gate.snapshot();
    expect(s.false_shed).toEqual({ total: 1, watching: 0, unjudged: 0 });
    expect(s.classes.c).toMatchObject({ false_shed: 1, true_shed: 1 });
    expect(s.classes.c!.tenants.a!.false_shed).toBe(1);
  });

  it('does not count a tenant-quota or duplicate reject as a shed', () => {
    const { gate, clock, admit } = gateOf();
    const held = admit('t', { idempotencyKey: 'k' });
    expect(gate.submit(env('c', 't', clock.now(), { idempotencyKey: 'k' }), 'dup')).toMatchObject({
      reason: 'duplicate_intent',
    });
    expect(gate.snapshot().false_shed.watching).toBe(0);
    gate.release(held);
    expect(gate.snapshot().false_shed.total).toBe(0);
  });

  it('measures starvation as the time a class with waiting work got no dispatch, and queue age', () => {
    const { gate, clock, admit, dispatched } = gateOf(
      one('{ max_count: 4, max_age_ms: 2000, max_cost_seats: 4 }'),
    );
    const held = admit('x');
    expect(gate.submit(env('c', 'q', clock.now()), 'q').kind).toBe('queue');
    clock.advance(300);
    expect(gate.snapshot().classes.c).toMatchObject({ starvation_ms_total: 300, starvation_ms_max: 300 });
    gate.release(held);
    expect(dispatched).toHaveLength(1);
    clock.advance(1000);
    const c = gate.snapshot().classes.c!;
    expect(c).toMatchObject({ starvation_ms_total: 300, starvation_ms_max: 300, dispatched: 1 });
    expect(c.queue_age_ms.count).toBe(1);
    expect(c.queue_age_ms.max).toBe(300);
    expect(c.queue_age_ms.p50).toBe(300);
    expect(c.tenants.q).toMatchObject({ starvation_ms_max: 300, dispatched: 1 });
  });

  it('measures recovery from the end of an unhealthy period until the queue is back at the threshold', () => {
    let healthy = true;
    const { gate, clock, admit } = gateOf(
      one('{ max_count: 4, max_age_ms: 5000, max_cost_seats: 4 }'),
      () => ({
        healthy,
      }),
    );
    const held = admit('x');
    healthy = false;
    expect(gate.submit(env('c', 'q', clock.now()), 'q').kind).toBe('queue');
    clock.advance(1000);
    healthy = true;
    gate.pump();
    expect(gate.snapshot().recovery).toMatchObject({
      state: 'recovering',
      unhealthy_periods: 1,
      unhealthy_ms: 1000,
    });
    clock.advance(250);
    gate.release(held);
    expect(gate.snapshot().recovery).toMatchObject({
      state: 'healthy',
      recoveries: 1,
      last_ms: 250,
      max_ms: 250,
    });
  });

  it("ends recovery at the policy's recovery.queue_depth: with 1, one waiter left still counts as recovered", () => {
    const text = (depth: number) => `version: 1
capacity_seats: 1
recovery: { queue_depth: ${depth} }
classes:
  c:
    priority: 10
    guaranteed_seats: 1
    queue: { max_count: 4, max_age_ms: 60000, max_cost_seats: 4 }
    deadline: { default_ms: 60000 }
envelope: { default_class: c }
`;
    let healthy = true;
    const { gate, clock, admit } = gateOf(parsePolicy(text(1), 'r.yaml'), () => ({ healthy }));
    const held = admit('x');
    healthy = false;
    expect(gate.submit(env('c', 'q', clock.now()), 'q').kind).toBe('queue');
    expect(gate.submit(env('c', 'r', clock.now()), 'r').kind).toBe('queue');
    clock.advance(1000);
    healthy = true;
    gate.pump();
    // Two wait: above the threshold of 1.
    expect(gate.snapshot().recovery).toMatchObject({ state: 'recovering', queue_depth_threshold: 1 });
    clock.advance(400);
    gate.release(held); // one of the two is dispatched, one waits: at the threshold
    expect(gate.snapshot().recovery).toMatchObject({ state: 'healthy', recoveries: 1, last_ms: 400 });
    // A swap brings the new policy's threshold.
    gate.swap(parsePolicy(text(3), 'r3.yaml'));
    expect(gate.snapshot().recovery.queue_depth_threshold).toBe(3);
  });

  it('refuses a recovery.queue_depth that is not a whole number of at least 0, naming the field', () => {
    const bad = (v: string) => () =>
      parsePolicy(
        `version: 1\ncapacity_seats: 1\nrecovery: { queue_depth: ${v} }\nclasses:\n  c: { priority: 1, guaranteed_seats: 1, queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }, deadline: { default_ms: 1000 } }\nenvelope: { default_class: c }\n`,
        'bad.yaml',
      );
    expect(bad('-1')).toThrow(/bad\.yaml:3:\d+: recovery\.queue_depth/);
    expect(bad('1.5')).toThrow(/recovery\.queue_depth/);
    expect(bad('"x"')).toThrow(/recovery\.queue_depth/);
  });

  it('counts retry amplification as attempts per intent, and duplicates', () => {
    const { gate, clock, admit } = gateOf();
    const held = admit('x');
    expect(gate.submit(env('c', 't', clock.now(), { idempotencyKey: 'k' }), 'a').kind).toBe('reject');
    expect(gate.submit(env('c', 't', clock.now(), { idempotencyKey: 'k' }), 'b').kind).toBe('reject');
    gate.release(held);
    const l = admit('t', { idempotencyKey: 'k2' });
    expect(gate.submit(env('c', 't', clock.now(), { idempotencyKey: 'k2' }), 'c').kind).toBe('reject');
    gate.release(l);
    expect(gate.snapshot().retry).toEqual({
      intents: 2,
      attempts: 3,
      retries: 1,
      duplicates: 1,
      blocked: 0,
      amplification: 1.5,
    });
  });

  it('is plain JSON with stable snake_case keys', () => {
    const { gate, admit } = gateOf();
    gate.release(admit());
    const s = gate.snapshot();
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    const keys = (o: unknown, at: string[] = []): string[] =>
      o !== null && typeof o === 'object'
        ? Object.entries(o).flatMap(([k, v]) => [k, ...keys(v, [...at, k])])
        : [];
    const names = keys(s).filter((k) => k !== 'c' && k !== 't');
    for (const k of names) expect(k).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(Object.keys(s)).toEqual([
      'at_ms',
      'policy_swaps',
      'classes',
      'totals',
      'retry',
      'reserve',
      'emergency',
      'false_shed',
      'defer_store',
      'recovery',
    ]);
  });

  it('renders sluice_policy_* metrics in the Prometheus text format, labels escaped', () => {
    const { gate, admit } = gateOf();
    gate.release(admit('a"b\\c'), { outcome: 'completed' });
    const text = gate.metrics();
    expect(text).toContain('# TYPE sluice_policy_offered_total counter');
    expect(text).toContain('sluice_policy_offered_total{class="c"} 1');
    expect(text).toContain('sluice_policy_dispositions_total{class="c",disposition="admit"} 1');
    expect(text).toContain('sluice_policy_useful_on_time_total{class="c"} 1');
    expect(text).toContain('sluice_policy_tenant_offered_total{class="c",tenant="a\\"b\\\\c"} 1');
    for (const line of text.trimEnd().split('\n'))
      expect(line).toMatch(
        /^(# (HELP|TYPE) sluice_policy_[a-z_]+ .+|sluice_policy_[a-z_]+(\{.*\})? [-+0-9.eInfNa]+)$/,
      );
  });

  it('documents every metric it renders in docs/policy.md', () => {
    const { gate, admit } = gateOf();
    gate.release(admit());
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'policy.md'), 'utf8');
    const names = new Set(
      [...gate.metrics().matchAll(/^# TYPE (sluice_policy_[a-z_]+)/gm)].map((m) => m[1]!),
    );
    expect(names.size).toBeGreaterThan(30);
    for (const n of names) expect(doc, n).toContain(`\`${n}\``);
  });
});
