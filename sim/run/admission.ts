/**
 * One face for the two gate dialects a scenario may configure: the loxilb
 * capacity gate (a rule and its env) or SMG's admission control. The run
 * talks to this, never to the dialect directly.
 */
import type {
  AdmissionRequest,
  Anomalies,
  Clock,
  Decision,
  DecisionReason,
  GateHost,
  Pool,
  Refusal,
  Ticket,
} from '../../gate/index.js';
import {
  Gate,
  parseRule,
  REASON_INDEX,
  SMG_RETRY_AFTER_S,
  SmgGate,
  type SmgSettings,
  smgResponse,
} from '../../gate/index.js';
import type { LoxilbGate, SmgGate as SmgSection } from '../scenario/resolve.js';

/** What a client sees of a refusal: status, error code, Retry-After and the jitter hint. */
export interface ClientView {
  status: number;
  error: string;
  /** Retry-After, s; undefined when the server cannot justify one (a policy's `unknown`). */
  retryAfterS: number | undefined;
  /** The body's jitter_hint_ms, when the dialect sends one. */
  jitterHintMs?: number;
}

export interface Admission {
  /** What the client sees of a refusal in this dialect. */
  clientView(r: Refusal): ClientView;
  readonly dialect: 'loxilb' | 'smg';
  admit(req: AdmissionRequest, ctx: unknown): Decision;
  cancel(ticket: Ticket): void;
  /** The live pool (re-created pools replace it). */
  pool(): Pool;
  /** POSTs a rule (loxilb only). @returns an error message when refused */
  apply(rule: unknown): string | undefined;
  setMaintenance(enabled: boolean): void;
  reportEngine(endpointId: string, waiting: number): void;
  setEndpointHealth(endpointId: string, healthy: boolean): void;
  /** True when the gate chooses endpoints (loxilb); SMG leaves it to its router. */
  readonly choosesEndpoints: boolean;
  readonly anomalies: Anomalies;
  /** Decisions by reason, summed over every pool the run had (re-creates restart a pool's counts). */
  decisions(): Record<DecisionReason, number>;
}

/** Builds the dialect's gate on the run's clock. */
export function buildAdmission(section: LoxilbGate | SmgSection, clock: Clock, host: GateHost): Admission {
  return section.dialect === 'smg'
    ? smgAdmission(section, clock, host)
    : loxilbAdmission(section, clock, host);
}

function sumDecisions(pools: readonly Pool[]): Record<DecisionReason, number> {
  const out = {} as Record<DecisionReason, number>;
  for (const [reason, i] of Object.entries(REASON_INDEX) as [DecisionReason, number][]) {
    out[reason] = pools.reduce((n, p) => n + p.decisions[i]!, 0);
  }
  return out;
}

function loxilbAdmission(section: LoxilbGate, clock: Clock, host: GateHost): Admission {
  const gate = new Gate({ clock, host, env: section.env });
  const key = parseRule(section.rule).key;
  gate.apply(section.rule);
  const pools: Pool[] = [];
  const live = (): Pool => {
    const p = gate.pool(key);
    if (p === undefined)
      throw new Error(`the scenario's rule ${key} is not an AI-gateway service (set sse_mode)`);
    if (pools[pools.length - 1] !== p) pools.push(p);
    return p;
  };
  live();
  return {
    clientView: (r) => ({
      status: r.status,
      error: r.error,
      retryAfterS: r.retryAfterS,
      jitterHintMs: r.jitterHintMs,
    }),
    dialect: 'loxilb',
    choosesEndpoints: true,
    anomalies: gate.anomalies,
    admit: (req, ctx) => gate.admit(key, req, ctx),
    cancel: (ticket) => gate.cancel(key, ticket),
    pool: live,
    apply(rule) {
      try {
        gate.apply(rule);
        live();
        return undefined;
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
    },
    setMaintenance: (enabled) => {
      gate.setMaintenance(enabled);
    },
    reportEngine: (id, waiting) => {
      gate.reportEngine(key, id, waiting);
    },
    setEndpointHealth: (id, healthy) => {
      gate.setEndpointHealth(key, id, healthy);
    },
    decisions: () => sumDecisions(pools),
  };
}

/** A scenario's SMG section as the settings `SmgGate` (and `SmgProxy`) take. */
export function smgSettingsOf(s: SmgSection['smg']): SmgSettings {
  return {
    max_concurrent_requests: s.max_concurrent_requests,
    queue_size: s.queue_size,
    queue_timeout_secs: s.queue_timeout_secs,
    ...(s.rate_limit_tokens_per_second === undefined
      ? {}
      : { rate_limit_tokens_per_second: s.rate_limit_tokens_per_second }),
  };
}

function smgAdmission(section: SmgSection, clock: Clock, host: GateHost): Admission {
  const smg = new SmgGate(smgSettingsOf(section.smg), { clock, host });
  return {
    clientView: (r) => {
      const v = smgResponse(r);
      return { status: v.status, error: v.code, retryAfterS: SMG_RETRY_AFTER_S };
    },
    dialect: 'smg',
    choosesEndpoints: false,
    anomalies: smg.anomalies,
    admit: (req, ctx) => smg.admit({ ...req }, ctx),
    cancel: (ticket) => smg.cancel(ticket),
    pool: () => smg.pool,
    apply: () => 'SMG settings cannot be replaced at runtime',
    setMaintenance: () => {},
    reportEngine: () => {},
    setEndpointHealth: () => {},
    decisions: () => sumDecisions([smg.pool]),
  };
}
