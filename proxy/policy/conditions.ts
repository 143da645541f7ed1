/**
 * The system's conditions as the proxy reports them to its policy (`Conditions` of the gate's
 * policy core), from the rules it serves, their endpoints' circuit breakers (proxy/monitor.ts)
 * and maintenance mode. A name in the policy — a `degrade` option's `pool` or a class's
 * `depends_on` entry — refers to the proxy rule whose `serviceArguments.name` is that name.
 *
 * - `availablePools`: the degrade pools whose rule has at least one endpoint with its breaker
 *   closed; none during maintenance (gate/policy/pool-availability.ts, the rule the simulator's
 *   fallback pools use too).
 * - `openDependencies`: the `depends_on` names whose rule has no endpoint with its breaker closed
 *   (no recovery time: the breaker's reopen is not a promise). A name no rule carries is never
 *   reported open: the proxy cannot know it.
 * - `healthy`: the rules the policy fronts — every rule not named by a degrade pool or a
 *   dependency — exist (at least one), each has at least one endpoint and none has an endpoint
 *   with an open breaker, and maintenance is off. Otherwise false: borrowing and the defer drain
 *   pause, and the scorecard counts an unhealthy period and then the recovery.
 */
import { availablePolicyPools, type Policy, type PolicyConditions } from '../../gate/index.js';

/** One rule as the conditions see it. */
export interface RuleHealth {
  /** `serviceArguments.name`, when the rule has one. */
  readonly name: string | undefined;
  /** `externalIP:port`. */
  readonly service: string;
  /** Endpoints of the rule. */
  readonly endpoints: number;
  /** Endpoints whose breaker is closed. */
  readonly usable: number;
}

/** The rule names a policy refers to: its degrade pools and its dependencies. */
export interface PolicyNames {
  readonly pools: ReadonlySet<string>;
  readonly dependencies: ReadonlySet<string>;
}

/** The pool and dependency names `p` declares. */
export function policyNames(p: Policy): PolicyNames {
  const pools = new Set<string>();
  const dependencies = new Set<string>();
  for (const c of p.classes) {
    for (const d of c.degrade) if (d.kind === 'pool') pools.add(d.pool);
    for (const n of c.dependsOn) dependencies.add(n);
  }
  return { pools, dependencies };
}

/** Whether a rule named `name` is one of the policy's names. */
export function namedByPolicy(names: PolicyNames, name: string | undefined): boolean {
  return name !== undefined && (names.pools.has(name) || names.dependencies.has(name));
}

/**
 * The first policy name two rules carry, with the field that names it, or null. A policy name
 * must map to one rule at most.
 */
export function ambiguousName(
  p: Policy,
  rules: readonly RuleHealth[],
): { field: string; name: string; services: string[] } | null {
  const byName = new Map<string, string[]>();
  for (const r of rules)
    if (r.name !== undefined) byName.set(r.name, [...(byName.get(r.name) ?? []), r.service]);
  for (const c of p.classes) {
    const cls = c.name;
    const deg = c.degrade;
    for (let i = 0; i < deg.length; i++) {
      const d = deg[i]!;
      if (d.kind !== 'pool') continue;
      const s = byName.get(d.pool) ?? [];
      if (s.length > 1) return { field: `classes.${cls}.degrade[${i}].pool`, name: d.pool, services: s };
    }
    const deps = c.dependsOn;
    for (let i = 0; i < deps.length; i++) {
      const s = byName.get(deps[i]!) ?? [];
      if (s.length > 1) return { field: `classes.${cls}.depends_on[${i}]`, name: deps[i]!, services: s };
    }
  }
  return null;
}

/** The conditions for `names` over `rules` (see the file's header for the definitions). */
export function policyConditions(
  names: PolicyNames,
  rules: readonly RuleHealth[],
  maintenance: boolean,
): PolicyConditions {
  let fronted = 0;
  let healthy = !maintenance;
  const availablePools = availablePolicyPools(names.pools, rules, maintenance);
  const openDependencies = new Map<string, { readonly retryAtMs?: number }>();
  for (const r of rules) {
    if (namedByPolicy(names, r.name)) {
      const n = r.name!;
      if (names.dependencies.has(n) && r.usable === 0) openDependencies.set(n, {});
      continue;
    }
    fronted++;
    if (r.endpoints === 0 || r.usable < r.endpoints) healthy = false;
  }
  if (fronted === 0) healthy = false;
  return { healthy, availablePools, openDependencies };
}
