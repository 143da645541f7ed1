/**
 * The simulator's policy conditions are the proxy's: for every combination of the fronted pool's
 * engines up or down, maintenance on or off and each dependency open or closed, the conditions
 * the run's policy reads (SimPolicy.conditions, over PoolHealth and the timeline's dependency
 * outages) equal those the proxy derives from its rules and breakers (policyConditions of
 * proxy/policy/conditions.ts, with one rule per dependency whose endpoints are all broken while
 * it is open). So `healthy` (borrowing and drain), `openDependencies` (dependency_open, no
 * Retry-After) and their independence from each other cannot drift apart between the two hosts.
 */
import { describe, expect, it } from 'vitest';
import { type PolicyConditions, parsePolicy } from '../../gate/index.js';
import { policyConditions, policyNames, type RuleHealth } from '../../proxy/policy/conditions.js';
import { Simulator } from '../kernel/simulator.js';
import { SimPolicy } from './policy-admission.js';
import { PoolHealth } from './pool-health.js';

const TEXT = `version: 1
capacity_seats: 4
classes:
  tooled:
    priority: 50
    guaranteed_seats: 2
    queue: { max_count: 2, max_age_ms: 1000, max_cost_seats: 2 }
    deadline: { default_ms: 60000 }
    depends_on: [tools, search]
  plain:
    priority: 100
    guaranteed_seats: 2
    queue: { max_count: 2, max_age_ms: 1000, max_cost_seats: 2 }
    deadline: { default_ms: 60000 }
envelope: { default_class: plain }
`;

/** Conditions as plain data: absent fields take the core's defaults (healthy, none open, no pool). */
function plain(c: PolicyConditions): { healthy: boolean; open: [string, unknown][]; pools: string[] } {
  return {
    healthy: c.healthy ?? true,
    open: [...(c.openDependencies ?? new Map()).entries()].sort(([a], [b]) => a.localeCompare(b)),
    pools: [...(c.availablePools ?? new Set<string>())].sort(),
  };
}

interface State {
  readonly down: number; // engines of the fronted pool down, of 2
  readonly maintenance: boolean;
  readonly open: readonly string[]; // dependencies with an outage in force
}

const STATES: State[] = [];
for (const down of [0, 1, 2])
  for (const maintenance of [false, true])
    for (const open of [[], ['tools'], ['search'], ['tools', 'search']])
      STATES.push({ down, maintenance, open });

/** The run's conditions in `s`. */
function simulated(s: State): PolicyConditions {
  const health = new PoolHealth(2);
  const policy = new SimPolicy(
    { file: 'p.yaml', text: TEXT, classes: ['tooled', 'plain'] },
    new Simulator(),
    health,
  );
  for (let i = 0; i < s.down; i++) health.engineDown(i);
  health.setMaintenance(s.maintenance);
  for (const name of s.open) policy.dependencies.start(name, 0);
  return policy.conditions();
}

/** The proxy's conditions in `s`: the fronted rule of two endpoints, one rule per dependency. */
function proxied(s: State): PolicyConditions {
  const rules: RuleHealth[] = [
    { name: undefined, service: '192.0.2.10:8080', endpoints: 2, usable: 2 - s.down },
    ...['tools', 'search'].map((name, i) => ({
      name,
      service: `192.0.2.${20 + i}:8080`,
      endpoints: 1,
      usable: s.open.includes(name) ? 0 : 1,
    })),
  ];
  return policyConditions(policyNames(parsePolicy(TEXT, 'p.yaml')), rules, s.maintenance);
}

describe('policy conditions in the simulator and behind the proxy', () => {
  it.each(STATES)('agree with $down engine(s) down, maintenance $maintenance, open $open', (s) => {
    const sim = plain(simulated(s));
    expect(sim).toEqual(plain(proxied(s)));
    // Not vacuous: each input shows in the conditions it should move.
    expect(sim.healthy).toBe(s.down === 0 && !s.maintenance);
    expect(sim.open.map(([n]) => n)).toEqual([...s.open].sort((a, b) => a.localeCompare(b)));
    for (const [, v] of sim.open) expect(v).toEqual({}); // no retry time in either host
  });
});
