/**
 * A scenario as a load run: its client setup (time-scaled with `--duration-scale`), the trace
 * records it replays (read up to the scaled end), the gate facts the summary carries (dialect
 * and configured ceilings, resolved by the gate core itself from the scenario's gate section), and
 * the envelope rules of its `gate.policy` (the file the scenario loader read and validated, beside
 * the scenario, compiled by the gate's own parser).
 */
import { type Policy, parsePolicy } from '../../gate/index.js';

import type { LoadSetup } from '../../sim/clients/schedule.js';
import { resolveTenants } from '../../sim/clients/tenants.js';
import type { TraceRecord } from '../../sim/clients/trace-parse.js';
import { Simulator } from '../../sim/kernel/simulator.js';
import { buildAdmission } from '../../sim/run/admission.js';
import type { RunSummary } from '../../sim/run/records.js';
import { replayedTrace } from '../../sim/run/trace-pull.js';
import { toClientConfig } from '../../sim/scenario/client-config.js';
import type { Scenario } from '../../sim/scenario/resolve.js';
import { scaleSetup } from '../shared/scale.js';
import type { LoadOptions } from './driver.js';
import { type EnvelopeRules, envelopeRules } from './envelope.js';

/** Most trace records read for one run. */
const MAX_TRACE_RECORDS = 2_000_000;

/** A scenario prepared for a load run (everything but the target). */
export interface PreparedLoad extends Omit<LoadOptions, 'target' | 'envelope'> {
  durationScale: number;
  /** The scenario's `gate.policy`: its file (as messages name it) and the envelope rules to send by. */
  policy?: { file: string; rules: EnvelopeRules; policy: Policy };
  /** Things of the scenario the open-loop driver does not do. */
  warnings: string[];
}

/** The dialect and configured ceilings of a scenario's gate, as the simulator reports them. */
export function gateFacts(scenario: Scenario): {
  dialect: 'loxilb' | 'smg';
  ceilings: RunSummary['ceilings'];
} {
  const admission = buildAdmission(scenario.gate, new Simulator(), {
    granted: () => 'gone',
    ended: () => {},
  });
  const p = admission.pool();
  return {
    dialect: admission.dialect,
    ceilings: {
      max_outstanding: p.bucket ? p.bucket.capacity : p.cfg.maxOutstanding,
      queue_depth: p.cfg.queueDepth,
      queue_wait_ms: p.cfg.queueWaitMs,
    },
  };
}

/** Prepares `scenario` for a load run, its times scaled by `durationScale`. */
export async function prepareLoad(
  scenario: Scenario,
  opts: { durationScale?: number; seed?: number } = {},
): Promise<PreparedLoad> {
  const x = opts.durationScale ?? 1;
  const setup = scaleSetup(toClientConfig(scenario) as LoadSetup & ReturnType<typeof toClientConfig>, x);
  const endMs = scenario.duration_s * 1000 * x;
  const warmupMs = scenario.warmup_s * 1000 * x;
  const warnings: string[] = [];
  if (setup.closedLoop !== undefined)
    warnings.push(
      'closed_loop users are not sent: the driver is open loop (arrival processes and traces only)',
    );
  if (scenario.timeline.some((e) => e.event !== 'workload_shift'))
    warnings.push(
      'timeline events other than workload_shift act on the gate and engines, not on the load: not applied',
    );
  let traceRecords: TraceRecord[] | undefined;
  const tr = setup.trace;
  if (tr !== undefined) {
    traceRecords = [];
    const limit = Math.min(tr.limit ?? MAX_TRACE_RECORDS, MAX_TRACE_RECORDS);
    for await (const rec of replayedTrace(tr, opts.seed ?? scenario.seed, undefined, limit)) {
      if (tr.startMs + rec.atMs / tr.speedup >= endMs) break;
      traceRecords.push(rec);
    }
  }
  const gate = gateFacts(scenario);
  const policy = policyOf(scenario, setup, warnings);
  return {
    setup,
    seed: opts.seed ?? scenario.seed,
    endMs,
    warmupMs,
    scenario: scenario.name,
    dialect: gate.dialect,
    ceilings: gate.ceilings,
    durationScale: x,
    warnings,
    ...(traceRecords ? { traceRecords } : {}),
    ...(policy ? { policy } : {}),
  };
}

/**
 * The scenario's policy rules, with a warning for each envelope input the wire does not carry:
 * a class the policy has no `class_claim` for (the simulator still puts the client in it), and
 * the inputs the proxy takes from elsewhere (costs from the body) or not at all.
 */
function policyOf(
  scenario: Scenario,
  setup: LoadSetup,
  warnings: string[],
): { file: string; rules: EnvelopeRules; policy: Policy } | undefined {
  const section = scenario.policy;
  if (section === undefined) return undefined;
  const policy = parsePolicy(section.text, section.file);
  const rules = envelopeRules(policy);
  const unclaimed = new Set<string>();
  const unsent = new Set<string>();
  for (const t of resolveTenants(setup.workload)) {
    const e = t.envelope;
    if (e === undefined) continue;
    if (e.className !== undefined && rules.classClaim === undefined) unclaimed.add(t.id ?? 'keyless');
    if (e.consequence !== undefined) unsent.add('consequence');
    if ((e.toolCalls ?? 0) > 0) unsent.add('tool_calls');
    if (e.reserve === true) unsent.add('reserve');
    if (e.promptEstimateShare !== undefined) unsent.add('prompt_estimate_share');
  }
  if (unclaimed.size > 0)
    warnings.push(
      `${section.file} has no envelope.class_claim: the envelope class of ${[...unclaimed].join(', ')} cannot be sent (the proxy classes them by route or default)`,
    );
  if (unsent.size > 0)
    warnings.push(
      `envelope ${[...unsent].join(', ')} are not sent: the proxy reads the cost from the request body and has no header for the rest`,
    );
  return { file: section.file, rules, policy };
}
