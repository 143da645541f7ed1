/**
 * A scenario's `gate.fallback_pools` in normal form: each pool's engine groups named (as the
 * main pool's are), and one endpoint per engine, with addresses of its own (`10.<100+k>.x.y:8000`
 * for the k-th pool) and pool indexes after the main pool's, so that no engine of a fallback pool
 * shares an address or a random stream with another engine of the run. Which pool names the
 * policy uses is checked with the policy (policy-checks.ts).
 */
import { endpointId } from '../../gate/index.js';
import type { EngineGroup, PoolEndpoint, Reporter, ResolveOptions } from './resolve.js';
import { nameGroups } from './resolve-engines.js';
import { SCENARIO_LIMITS, type ScenarioFile } from './schema.js';

/** One fallback pool of a scenario. */
export interface FallbackPool {
  /** The name a policy's pool degrade gives. */
  readonly name: string;
  /** Its engine groups (role normal). */
  readonly engines: EngineGroup[];
  /** One endpoint per engine; `index` counts on from the main pool's last endpoint. */
  readonly endpoints: PoolEndpoint[];
}

/** Generated address of the n-th endpoint (from 0) of the k-th fallback pool (from 0). */
export function fallbackEndpoint(k: number, n: number): { endpointIP: string; targetPort: number } {
  return { endpointIP: `10.${100 + k}.${Math.floor(n / 250)}.${(n % 250) + 1}`, targetPort: 8000 };
}

/**
 * The fallback pools of a schema-valid scenario, in file order; `mainEngines` is the main pool's
 * engine count (the first index a fallback engine takes).
 */
export function resolveFallbackPools(
  file: string,
  s: ScenarioFile,
  mainEngines: number,
  report: Reporter,
  options: ResolveOptions,
): FallbackPool[] {
  const given = s.gate.fallback_pools;
  if (given === undefined) return [];
  const out: FallbackPool[] = [];
  let index = mainEngines;
  Object.entries(given).forEach(([name, spec], k) => {
    const at = ['gate', 'fallback_pools', name];
    const engines = nameGroups(
      spec.engines.map((g, i) => ({ spec: g, path: [...at, 'engines', i] })),
      file,
      report,
      options,
    );
    const endpoints: PoolEndpoint[] = [];
    engines.forEach((g, i) => {
      if (g.role !== 'normal')
        report(
          [...at, 'engines', i, 'role'],
          g.role,
          `"${g.role}" is refused in a fallback pool (a degraded request runs whole on one engine)`,
          'normal',
        );
      for (let e = 0; e < g.count; e++) {
        const addr = fallbackEndpoint(k, endpoints.length);
        endpoints.push({
          index: index++,
          id: endpointId(addr),
          ...addr,
          weight: g.weight,
          role: 'normal',
          group: g.name,
          engine: e,
        });
      }
    });
    out.push({ name, engines, endpoints });
  });
  const total = index;
  if (total > SCENARIO_LIMITS.engines)
    report(
      ['gate', 'fallback_pools'],
      total - mainEngines,
      `${total - mainEngines} fallback engines and ${mainEngines} in the pool make ${total}, above the maximum ${SCENARIO_LIMITS.engines}`,
      `at most ${SCENARIO_LIMITS.engines} engines in all`,
    );
  return out;
}
