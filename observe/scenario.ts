/**
 * The scenario an observe replay runs: the user's rule (forced to observe,
 * or to enforce for the comparison run), one simulated engine per endpoint
 * of the rule (or recorded timings for a decision log), and the trace.
 */
import { stringify } from 'yaml';
import { GateError, parseRule } from '../gate/index.js';
import type { TraceFormat } from '../sim/clients/trace-files.js';
import { parseScenarioText } from '../sim/scenario/load.js';
import type { Scenario } from '../sim/scenario/resolve.js';

export interface ObserveSetup {
  /** The rule as the management API takes it: `{serviceArguments, endpoints}`. */
  rule: { serviceArguments: Record<string, unknown>; endpoints?: unknown[] };
  /** Absolute path of the trace. */
  trace: string;
  format: TraceFormat;
  speedup: number;
  /** Engine profile for the simulated endpoints (ignored for a decision log, which replays recorded timings). */
  profile: string;
  /** TTFT objective of a good request, ms. */
  ttftSloMs: number;
  /** Longest replay, s of virtual time (the run ends earlier when the trace is done). */
  maxDurationS: number;
  limit?: number;
}

/** Longest replay by default: a day of virtual time. */
export const MAX_REPLAY_S = 86_400;

/**
 * The scenario for one mode. Throws GateError for a rule that is not an
 * AI-gateway service or has no endpoints.
 */
export function observeScenario(o: ObserveSetup, mode: 'observe' | 'enforce'): Scenario {
  const parsed = parseRule(o.rule);
  if (!parsed.aiGateway) {
    throw new GateError(
      'SLUICE_E_FIELD_VALUE',
      'serviceArguments.mode',
      o.rule.serviceArguments.mode,
      'an AI-gateway service: mode 4 with sse_mode, pd_disagg_mode or an enforcing api_key_auth',
    );
  }
  if (parsed.endpoints.length === 0) {
    throw new GateError(
      'SLUICE_E_FIELD_MISSING',
      'endpoints',
      undefined,
      'at least one endpoint to replay against',
    );
  }
  const profile = o.format === 'jsonl' ? 'recorded' : o.profile;
  // Engine groups pair with the rule's endpoints in order: one group per run of the same role.
  const groups: { role: string; count: number }[] = [];
  for (const e of parsed.endpoints) {
    const last = groups.at(-1);
    if (last?.role === e.role) last.count++;
    else groups.push({ role: e.role, count: 1 });
  }
  const doc = {
    name: `observe-${mode}`,
    description: `Replay of ${o.trace} with the gate in ${mode} mode.`,
    seed: 1,
    duration_s: o.maxDurationS,
    gate: {
      rule: {
        serviceArguments: { ...o.rule.serviceArguments, fc_mode: mode },
        endpoints: parsed.endpoints,
      },
    },
    engines: groups.map((g, i) => ({
      name: `${profile}-${g.role}-${i}`,
      profile,
      count: g.count,
      role: g.role,
    })),
    clients: {
      trace: {
        file: o.trace,
        format: o.format,
        speedup: o.speedup,
        ...(o.limit === undefined ? {} : { limit: o.limit }),
      },
      stream_share: 1,
      ttft_slo_ms: o.ttftSloMs,
      retry: { kind: 'none' },
    },
  };
  return parseScenarioText(stringify(doc), `observe-${mode}.yaml`);
}
