/**
 * Which fallback pools of a policy can take a degraded request now: the `availablePools` of the
 * policy's conditions. One rule for both hosts, so that the proxy (proxy/policy/conditions.ts,
 * over its rules and their endpoints' circuit breakers) and the simulator
 * (sim/run/fallback-pools.ts, over a scenario's `gate.fallback_pools` and their engines) give the
 * same answer for the same state: a pool is available when something carries its name, it has
 * at least one usable endpoint, and maintenance is off (none is then).
 */

/** One carrier of a pool name as the rule sees it: a proxy rule, or a scenario's fallback pool. */
export interface PoolCarrier {
  /** The name it carries (a proxy rule's `serviceArguments.name`); undefined when it has none. */
  readonly name: string | undefined;
  /** Endpoints that can take a request now (breaker closed; in the simulator, engine up). */
  readonly usable: number;
}

/**
 * The names of `pools` that some carrier of `carriers` bears with at least one usable endpoint;
 * empty while `maintenance` is on. Pure; the order is the carriers' order.
 */
export function availablePools(
  pools: ReadonlySet<string>,
  carriers: readonly PoolCarrier[],
  maintenance: boolean,
): Set<string> {
  const out = new Set<string>();
  if (maintenance) return out;
  for (const c of carriers) if (c.name !== undefined && pools.has(c.name) && c.usable > 0) out.add(c.name);
  return out;
}
