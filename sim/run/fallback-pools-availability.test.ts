/**
 * The simulator's `availablePools` is the proxy's: the same cases through the proxy's
 * `policyConditions` (proxy/policy/conditions.ts, its rules and breakers) and through the run's
 * {@link FallbackPools} (a scenario's fallback pools and their engines) give the same set.
 */
import { describe, expect, it } from 'vitest';
import { availablePolicyPools, parsePolicy } from '../../gate/index.js';
import { policyConditions, policyNames, type RuleHealth } from '../../proxy/policy/conditions.js';
import { Simulator } from '../kernel/simulator.js';
import type { FallbackPool } from '../scenario/resolve-fallback-pools.js';
import { engineGroupSchema } from '../scenario/schema.js';
import { FallbackPools } from './fallback-pools.js';

const POLICY = parsePolicy(
  `version: 1
capacity_seats: 4
classes:
  a:
    priority: 10
    guaranteed_seats: 4
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 1000 }
    degrade:
      - { kind: pool, pool: small }
      - { kind: pool, pool: spare }
envelope: { default_class: a }
`,
  'p.yaml',
);

/** A fallback pool `name` of `count` 8B engines, indexes from `first`. */
function pool(name: string, k: number, count: number, first: number): FallbackPool {
  const g = engineGroupSchema.parse({ profile: 'llama-3.1-8b-h100', count });
  const engines = [{ ...g, profile: 'llama-3.1-8b-h100', name: 'g' }];
  const endpoints = Array.from({ length: count }, (_, e) => ({
    index: first + e,
    id: `10.${100 + k}.0.${e + 1}:8000`,
    endpointIP: `10.${100 + k}.0.${e + 1}`,
    targetPort: 8000,
    weight: 1,
    role: 'normal' as const,
    group: 'g',
    engine: e,
  }));
  return { name, engines, endpoints };
}

describe('availablePools in the simulator and behind the proxy', () => {
  const fp = new FallbackPools(
    new Simulator(),
    1,
    [pool('small', 0, 2, 1), pool('spare', 1, 1, 3)],
    () => {},
  );
  /** The proxy's rules for the same state: the main rule and one rule per pool, named as it. */
  const rules = (): RuleHealth[] => [
    { name: undefined, service: 'main', endpoints: 1, usable: 1 },
    ...fp.carriers().map((c) => ({
      name: c.name,
      service: `s-${c.name}`,
      endpoints: c.name === 'small' ? 2 : 1,
      usable: c.usable,
    })),
  ];
  const proxy = (maintenance: boolean): string[] => [
    ...(policyConditions(policyNames(POLICY), rules(), maintenance).availablePools ?? []),
  ];
  const sim = (maintenance: boolean): string[] => [
    ...availablePolicyPools(new Set(['small', 'spare']), fp.carriers(), maintenance),
  ];

  it('agrees on every state of the engines and maintenance', () => {
    const cases: [number[], boolean, string[]][] = [
      [[], false, ['small', 'spare']],
      [[], true, []],
      [[0], false, ['small', 'spare']],
      [[0, 1], false, ['spare']],
      [[2], false, ['small']],
      [[0, 1, 2], false, []],
      [[0, 1, 2], true, []],
    ];
    for (const [down, maintenance, expected] of cases) {
      fp.nodes.forEach((n, i) => {
        n.up = !down.includes(i);
      });
      expect({ down, maintenance, pools: sim(maintenance) }).toEqual({ down, maintenance, pools: expected });
      expect(proxy(maintenance)).toEqual(expected);
    }
    for (const n of fp.nodes) n.up = true;
  });

  it("gives the run's decisions the rule's answer: every pool with its engines up, none in maintenance", () => {
    expect([...fp.available(false)]).toEqual(sim(false));
    expect([...fp.available(false)]).toEqual(proxy(false));
    expect([...fp.available(true)]).toEqual(proxy(true));
    expect([...fp.available(true)]).toEqual([]);
  });

  it('picks round-robin over the engines up, null when none is', () => {
    const ids = [0, 1, 2].map(() => fp.pick('small')?.endpoint.id);
    expect(ids).toEqual(['10.100.0.1:8000', '10.100.0.2:8000', '10.100.0.1:8000']);
    fp.nodes[0]!.up = false;
    expect(fp.pick('small')?.endpoint.id).toBe('10.100.0.2:8000');
    fp.nodes[1]!.up = false;
    expect(fp.pick('small')).toBeNull();
    expect(fp.pick('unknown')).toBeNull();
    expect(fp.figures().small).toMatchObject({ sent: 5, completed: 0, in_system_at_end: 5 });
  });
});
