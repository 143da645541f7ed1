/**
 * A grid point applied to a scenario: the rule (loxilb) or SMG settings with
 * the varied fields set, checked by the gate's own validation, and the
 * ready-to-apply rule or SMG flags of a recommended point.
 */
import { parseRule, parseSmgSettings, type SmgSettings } from '../gate/index.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import { SweepInputError } from './errors.js';
import { type Params, paramsText } from './grid.js';
import { checkPolicyPoint, isPolicyField, pointPolicyText } from './policy-vary.js';

/** The gate settings a sweep varies: the rule's serviceArguments, or the SMG settings. */
export type BaseSettings = Record<string, unknown>;

/** The scenario's own settings the grid is applied to. */
export function baseSettings(scenario: Scenario): BaseSettings {
  return scenario.gate.dialect === 'smg'
    ? { ...scenario.gate.smg }
    : { ...scenario.gate.rule.serviceArguments };
}

/** The scenario with the point's values set (a new, unfrozen object; `scenario` is untouched). */
export function pointScenario(scenario: Scenario, params: Params): Scenario {
  if (Object.keys(params).length === 0) return scenario;
  const gate = structuredClone(scenario.gate);
  const ruleParams = ruleParamsOf(params);
  if (gate.dialect === 'smg') Object.assign(gate.smg as Record<string, unknown>, ruleParams);
  else Object.assign(gate.rule.serviceArguments, ruleParams);
  const out: Scenario = { ...scenario, gate };
  if (scenario.policy !== undefined && Object.keys(ruleParams).length < Object.keys(params).length)
    out.policy = { ...scenario.policy, text: pointPolicyText(scenario.policy.text, params) };
  return out;
}

/** The point's rule (or SMG) fields, without its `policy.` fields. */
export function ruleParamsOf(params: Params): Params {
  return Object.fromEntries(Object.entries(params).filter(([k]) => !isPolicyField(k)));
}

/** The point's `policy.` fields, paths without the prefix. */
export function policyParamsOf(params: Params): Params {
  return Object.fromEntries(
    Object.entries(params)
      .filter(([k]) => isPolicyField(k))
      .map(([k, v]) => [k.slice('policy.'.length), v]),
  );
}

/**
 * Checks the point's whole rule (or SMG settings) as the gate would take it,
 * so a combination the gate refuses (a depth with a wait of 0) is an input
 * error before anything runs.
 * @throws SweepInputError naming the point and the gate's complaint
 */
export function checkPoint(scenario: Scenario, params: Params): void {
  const s = pointScenario(scenario, params);
  try {
    if (s.gate.dialect === 'smg') parseSmgSettings(s.gate.smg, 'smg');
    else parseRule(s.gate.rule);
  } catch (err) {
    throw new SweepInputError(
      `--vary: the point ${paramsText(params)} is not a valid rule: ${(err as Error).message}`,
    );
  }
  if (s.policy !== undefined && s.policy !== scenario.policy)
    checkPolicyPoint(s.policy.file, s.policy.text, paramsText(params));
}

/** SMG's command-line flag for each setting. */
const SMG_FLAGS: Record<keyof SmgSettings, string> = {
  max_concurrent_requests: '--max-concurrent-requests',
  queue_size: '--queue-size',
  queue_timeout_secs: '--queue-timeout-secs',
  rate_limit_tokens_per_second: '--rate-limit-tokens-per-second',
};

/** The recommended rule: the base settings with the point's values set; SMG flags for an SMG scenario. */
export function recommendedRule(
  dialect: 'loxilb' | 'smg',
  base: BaseSettings,
  params: Params,
): { rule: Record<string, unknown>; flags?: string[] } {
  const settings = { ...base, ...ruleParamsOf(params) };
  if (dialect === 'loxilb') return { rule: { serviceArguments: settings } };
  const r = parseSmgSettings(settings, 'smg');
  const flags = [
    `${SMG_FLAGS.max_concurrent_requests} ${r.maxConcurrentRequests}`,
    `${SMG_FLAGS.queue_size} ${r.queueSize}`,
    `${SMG_FLAGS.queue_timeout_secs} ${r.queueTimeoutSecs}`,
  ];
  if (r.rateLimitTokensPerSecond > 0) {
    flags.push(`${SMG_FLAGS.rate_limit_tokens_per_second} ${r.rateLimitTokensPerSecond}`);
  }
  return { rule: { smg: settings }, flags };
}
