/**
 * The policy's dependencies in the simulator: open while a `dependency_outage` is in force (nested
 * windows close with the last), and as the conditions of the policy host, a dependent class's new
 * requests are rejected with dependency_open and no Retry-After, others admitted.
 */
import { describe, expect, it, vi } from 'vitest';
import type { RequestDescriptor } from '../clients/request-factory.js';
import { Simulator } from '../kernel/simulator.js';
import { DependencyOutages } from './dependency-outages.js';
import { SimPolicy } from './policy-admission.js';
import { Attempt, type Lifecycle } from './requests.js';

/** Class `tooled` depends on `tools`, class `plain` on nothing, class `docs` on `store`. */
const POLICY = `version: 1
capacity_seats: 6
classes:
  tooled:
    priority: 50
    guaranteed_seats: 2
    queue: { max_count: 4, max_age_ms: 10000, max_cost_seats: 4 }
    deadline: { default_ms: 60000 }
    estimator: { min_seats: 1, max_seats: 1 }
    depends_on: [tools]
  plain:
    priority: 100
    guaranteed_seats: 2
    queue: { max_count: 4, max_age_ms: 10000, max_cost_seats: 4 }
    deadline: { default_ms: 60000 }
    estimator: { min_seats: 1, max_seats: 1 }
  docs:
    priority: 10
    guaranteed_seats: 2
    queue: { max_count: 4, max_age_ms: 10000, max_cost_seats: 4 }
    deadline: { default_ms: 60000 }
    estimator: { min_seats: 1, max_seats: 1 }
    depends_on: [store, tools]
envelope: { default_class: plain }
`;

let ids = 0;
/** A fresh attempt of class `cls`, sent at `atMs`. */
function attempt(cls: string, atMs: number): Attempt {
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
    envelope: { className: cls },
  };
  return new Attempt(d);
}

function setup() {
  const sim = new Simulator();
  const policy = new SimPolicy(
    { file: 'deps.yaml', text: POLICY, classes: ['tooled', 'plain', 'docs'] },
    sim,
  );
  policy.attach({ policyGo: () => {}, policyRefuse: () => {} } as unknown as Lifecycle);
  const at = (ms: number, fn: () => void): void => {
    sim.schedule(ms, fn);
    sim.run(ms);
  };
  /** The verdict of a new request of `cls` now; its seats go back at once. */
  const verdict = (cls: string) => {
    const a = attempt(cls, sim.now());
    const v = policy.arrive(a);
    if (v.kind === 'go') policy.ended(a, 'completed', false);
    return v;
  };
  return { sim, policy, at, verdict };
}

describe('dependency outages in the simulator', () => {
  it('opens a name while any of its outages is in force, tallies its periods, and signals each change once', () => {
    const changed = vi.fn();
    const d = new DependencyOutages(['tools', 'store'], changed);
    expect([d.anyOpen, d.open.size]).toEqual([false, 0]);
    d.start('tools', 1000);
    d.start('tools', 1500); // a second window inside the first: no change
    expect([d.anyOpen, [...d.open.keys()], changed.mock.calls.length]).toEqual([true, ['tools'], 1]);
    expect(d.open.get('tools')).toEqual({}); // no retry time: the reopen is not a promise
    d.end('tools', 2000); // the first window ends, the second is still in force
    expect([d.open.has('tools'), changed.mock.calls.length]).toEqual([true, 1]);
    d.end('tools', 4000);
    d.end('tools', 5000); // none in force: a no-op
    expect([d.anyOpen, changed.mock.calls.length]).toEqual([false, 2]);
    d.start('tools', 8000);
    expect(d.figures(9000)).toEqual({
      tools: { opened: 2, open_ms: 3000 + 1000 },
      store: { opened: 0, open_ms: 0 },
    });
  });

  it('rejects new requests of every class that depends on the open name with dependency_open, no Retry-After; others go', () => {
    const { policy, at, verdict } = setup();
    const pump = vi.spyOn(policy.gate, 'pump');
    expect(['tooled', 'plain', 'docs'].map((c) => verdict(c).kind)).toEqual(['go', 'go', 'go']);

    at(1000, () => policy.dependencies.start('tools', 1000));
    expect(pump).toHaveBeenCalledTimes(1); // the host is pumped at the change, as on a health change
    const open = { kind: 'refuse', outcome: 'shed', view: { status: 503, error: 'dependency_open' } };
    expect(verdict('tooled')).toEqual({ ...open, view: { ...open.view, retryAfterS: undefined } });
    expect(verdict('docs')).toEqual({ ...open, view: { ...open.view, retryAfterS: undefined } });
    expect(verdict('plain').kind).toBe('go');

    // Only `store` open: `docs` depends on it, `tooled` does not.
    at(2000, () => {
      policy.dependencies.end('tools', 2000);
      policy.dependencies.start('store', 2000);
    });
    expect(pump).toHaveBeenCalledTimes(3);
    expect(['tooled', 'plain', 'docs'].map((c) => verdict(c).kind)).toEqual(['go', 'go', 'refuse']);

    at(3000, () => policy.dependencies.end('store', 3000));
    expect(['tooled', 'plain', 'docs'].map((c) => verdict(c).kind)).toEqual(['go', 'go', 'go']);

    const card = policy.snapshot().classes as Record<string, { rejected_by_reason: Record<string, number> }>;
    expect(card.tooled!.rejected_by_reason.dependency_open).toBe(1);
    expect(card.docs!.rejected_by_reason.dependency_open).toBe(2);
    expect(card.plain!.rejected_by_reason.dependency_open).toBe(0);
    expect(policy.dependencies.figures(3000)).toEqual({
      tools: { opened: 1, open_ms: 1000 },
      store: { opened: 1, open_ms: 1000 },
    });
  });
});
