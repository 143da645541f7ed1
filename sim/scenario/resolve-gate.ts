/**
 * The gate part of a scenario's normal form: the loxilb rule with its endpoints made explicit
 * (one per engine, in pool order) and the gateway's environment as strings, or SMG's settings.
 */
import type { LoxilbGate, PoolEndpoint, RuleEndpointInput, RuleInput, SmgGate } from './resolve.js';
import type { ScenarioFile, SmgSettings } from './schema.js';

/** The rule's endpoint list for a pool, in pool order. */
function ruleEndpoints(endpoints: readonly PoolEndpoint[]): RuleEndpointInput[] {
  return endpoints.map((ep) => ({
    endpointIP: ep.endpointIP,
    targetPort: ep.targetPort,
    weight: ep.weight,
    role: ep.role,
  }));
}

/** The scenario's gate in normal form, over the resolved pool. */
export function resolveGate(s: ScenarioFile, endpoints: readonly PoolEndpoint[]): LoxilbGate | SmgGate {
  const rule = s.gate.rule;
  if (rule === undefined) return { dialect: 'smg', smg: s.gate.smg as SmgSettings };
  const input: RuleInput = {
    serviceArguments: { ...rule.serviceArguments },
    endpoints: ruleEndpoints(endpoints),
  };
  if (rule.secondaryIPs !== undefined) input.secondaryIPs = [...rule.secondaryIPs];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.gate.env ?? {})) env[k] = String(v);
  return { dialect: 'loxilb', rule: input, env };
}
