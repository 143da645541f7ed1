/**
 * The policy's health signal in the simulator: the pool's health (engines down, maintenance) as
 * the conditions of the policy host, on the run's virtual clock.
 */
import { describe, expect, it } from 'vitest';
import type { RequestDescriptor } from '../clients/request-factory.js';
import { Simulator } from '../kernel/simulator.js';
import { SimPolicy } from './policy-admission.js';
import { PoolHealth } from './pool-health.js';
import { Attempt, type Lifecycle } from './requests.js';

/** Two seats: class `a` holds one and may borrow the other, which class `b` lends. */
const POLICY = `version: 1
capacity_seats: 2
classes:
  a:
    priority: 100
    guaranteed_seats: 1
    borrow: { allowed: true, max_seats: 1 }
    queue: { max_count: 4, max_age_ms: 10000, max_cost_seats: 4 }
    deadline: { default_ms: 60000 }
    estimator: { min_seats: 1, max_seats: 1 }
  b:
    priority: 10
    guaranteed_seats: 1
    lendable_pct: 100
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 60000 }
    estimator: { min_seats: 1, max_seats: 1 }
envelope: { default_class: a }
`;

let ids = 0;
/** A fresh attempt of the default class, sent at `atMs`. */
function attempt(atMs: number): Attempt {
  const id = ++ids;
  const d: RequestDescriptor = {
    id,
    logicalId: id,
    attempt: 1,
    tenant: `t${id}`,
    promptTokens: 100,
    outputTokens: 10,
    stream: true,
    protocol: 'http1',
    pd: false,
    inference: true,
    sentAtMs: atMs,
    firstSentAtMs: atMs,
    deadlineMs: undefined,
    ttftSloMs: undefined,
  };
  return new Attempt(d);
}

function setup() {
  const sim = new Simulator();
  let policy: SimPolicy | undefined;
  const health = new PoolHealth(1, () => policy?.healthChanged());
  policy = new SimPolicy({ file: 'two.yaml', text: POLICY, classes: ['a', 'b'] }, sim, health);
  const went: Attempt[] = [];
  // The lifecycle's side of a held attempt: the policy lets it go on to the gate.
  const lifecycle = {
    policyGo: (a: Attempt) => {
      a.phase = 'new';
      went.push(a);
    },
    policyRefuse: () => {
      throw new Error('nothing should be refused');
    },
  } as unknown as Lifecycle;
  policy.attach(lifecycle);
  /** Submits an attempt now; a held one is marked held as the lifecycle does. */
  const arrive = (): { a: Attempt; kind: string } => {
    const a = attempt(sim.now());
    const v = policy!.arrive(a);
    if (v.kind === 'held') a.phase = 'held';
    return { a, kind: v.kind };
  };
  const at = (ms: number, fn: () => void): void => {
    sim.schedule(ms, fn);
    sim.run(ms);
  };
  return { sim, health, policy, arrive, went, at };
}

describe('the pool health the simulator gives its policy', () => {
  it('is unhealthy while any engine of the rule is down or maintenance is on, healthy when all are back', () => {
    let changes = 0;
    const h = new PoolHealth(3, () => changes++);
    expect(h.healthy).toBe(true);
    h.engineDown(0);
    h.engineDown(1);
    h.engineDown(1); // already down: no-op
    h.engineUp(0);
    expect([h.healthy, h.enginesDown, changes]).toEqual([false, 1, 1]);
    h.engineUp(1);
    expect([h.healthy, changes]).toEqual([true, 2]);
    h.engineUp(1); // already up: no-op
    h.setMaintenance(true);
    expect(h.healthy).toBe(false);
    h.setMaintenance(false);
    expect([h.healthy, changes]).toEqual([true, 4]);
  });

  it('counts only the engines the rule lists: a standby out of the rule is not unhealthy, one taken in is', () => {
    const h = new PoolHealth(3);
    h.engineDown(2); // the standby, in the rule from the start: unhealthy
    expect(h.healthy).toBe(false);
    h.setMembers([0, 1]); // a replace leaves it out
    expect(h.healthy).toBe(true);
    h.engineDown(0); // a primary fails
    expect([h.healthy, h.enginesDown]).toEqual([false, 1]);
    h.setMembers([1, 2]); // the failed primary out, the standby in while still down
    expect([h.healthy, h.enginesDown]).toEqual([false, 1]);
    h.engineUp(2);
    expect(h.healthy).toBe(true);
    h.engineUp(0); // back, but out of the rule: nothing changes
    expect([h.healthy, h.enginesDown]).toEqual([true, 0]);
    h.setMembers([]); // a rule without endpoints fronts nothing
    expect(h.healthy).toBe(false);
  });

  it('stops borrowing from the next decision after an engine goes down, and measures the recovery once it is back', () => {
    const { health, policy, arrive, went, at } = setup();
    // Healthy: the second request borrows class b's idle seat.
    const first = arrive();
    const second = arrive();
    expect([first.kind, second.kind]).toEqual(['go', 'go']);
    policy.ended(first.a, 'completed', false);
    policy.ended(second.a, 'completed', false);
    expect(policy.snapshot().recovery).toMatchObject({ state: 'healthy', unhealthy_periods: 0 });

    // An engine down at 1 s: the period starts then, and the next decision borrows nothing.
    at(1000, () => health.engineDown(0));
    expect(policy.snapshot().recovery).toMatchObject({ state: 'unhealthy', unhealthy_periods: 1 });
    const own = arrive();
    const noBorrow = arrive();
    const behind = arrive();
    expect([own.kind, noBorrow.kind, behind.kind]).toEqual(['go', 'held', 'held']);
    expect(policy.gate.waiting).toBe(2);

    // Back at 3 s: healthy again, the first waiter borrows at once; the other waits for a seat.
    at(3000, () => health.engineUp(0));
    expect(went).toEqual([noBorrow.a]);
    expect(policy.snapshot().recovery).toMatchObject({
      state: 'recovering',
      unhealthy_periods: 1,
      unhealthy_ms: 2000,
      recoveries: 0,
    });
    // A seat frees at 3.5 s: the last waiter goes, the queue is empty, the recovery took 500 ms.
    at(3500, () => policy.ended(own.a, 'completed', false));
    expect(went).toEqual([noBorrow.a, behind.a]);
    expect(policy.snapshot().recovery).toMatchObject({
      state: 'healthy',
      unhealthy_periods: 1,
      unhealthy_ms: 2000,
      recoveries: 1,
      last_ms: 500,
      max_ms: 500,
    });
  });
});
