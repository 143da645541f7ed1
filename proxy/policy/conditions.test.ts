import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../gate/index.js';
import { ambiguousName, policyConditions, policyNames, type RuleHealth } from './conditions.js';

const POLICY = parsePolicy(
  `version: 1
capacity_seats: 4
classes:
  a:
    priority: 10
    guaranteed_seats: 2
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 1000 }
    depends_on: [tools]
    degrade:
      - { kind: pool, pool: spare }
  b:
    priority: 5
    guaranteed_seats: 2
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 1000 }
envelope: { default_class: a }
`,
  'p.yaml',
);
const names = policyNames(POLICY);
const r = (
  name: string | undefined,
  endpoints: number,
  usable: number,
  service = `s-${name}`,
): RuleHealth => ({
  name,
  service,
  endpoints,
  usable,
});

describe('policyConditions', () => {
  it('is healthy when every fronted rule has all its endpoints usable, maintenance off', () => {
    const c = policyConditions(
      names,
      [r(undefined, 2, 2), r('main', 1, 1), r('spare', 1, 1), r('tools', 1, 1)],
      false,
    );
    expect(c.healthy).toBe(true);
    expect([...(c.availablePools ?? [])]).toEqual(['spare']);
    expect([...(c.openDependencies?.keys() ?? [])]).toEqual([]);
  });

  it('is unhealthy with one open breaker in a fronted rule, with a fronted rule of no endpoint, with no fronted rule, in maintenance', () => {
    expect(policyConditions(names, [r(undefined, 2, 1)], false).healthy).toBe(false);
    expect(policyConditions(names, [r(undefined, 2, 2), r('x', 0, 0)], false).healthy).toBe(false);
    expect(policyConditions(names, [r('spare', 1, 1)], false).healthy).toBe(false);
    expect(policyConditions(names, [], false).healthy).toBe(false);
    expect(policyConditions(names, [r(undefined, 1, 1)], true).healthy).toBe(false);
  });

  it('does not count a fallback pool or a dependency against health; reports them on their own', () => {
    const c = policyConditions(names, [r(undefined, 1, 1), r('spare', 2, 0), r('tools', 2, 0)], false);
    expect(c.healthy).toBe(true);
    expect([...(c.availablePools ?? [])]).toEqual([]);
    expect([...(c.openDependencies?.keys() ?? [])]).toEqual(['tools']);
    // One usable endpoint is enough for both; maintenance takes every pool away.
    const d = policyConditions(names, [r(undefined, 1, 1), r('spare', 2, 1), r('tools', 2, 1)], false);
    expect([...(d.availablePools ?? [])]).toEqual(['spare']);
    expect(d.openDependencies?.size).toBe(0);
    expect(policyConditions(names, [r(undefined, 1, 1), r('spare', 1, 1)], true).availablePools?.size).toBe(
      0,
    );
    // A dependency no rule carries is never reported open.
    expect(policyConditions(names, [r(undefined, 1, 1)], false).openDependencies?.size).toBe(0);
  });

  it('names the field of a policy name two rules carry', () => {
    expect(ambiguousName(POLICY, [r('spare', 1, 1, 'x:1'), r('other', 1, 1)])).toBeNull();
    expect(ambiguousName(POLICY, [r('spare', 1, 1, 'x:1'), r('spare', 1, 1, 'x:2')])).toEqual({
      field: 'classes.a.degrade[0].pool',
      name: 'spare',
      services: ['x:1', 'x:2'],
    });
    expect(ambiguousName(POLICY, [r('tools', 1, 1, 'x:1'), r('tools', 1, 1, 'x:2')])?.field).toBe(
      'classes.a.depends_on[0]',
    );
  });
});
