/**
 * The gate: every rule's pool, keyed by `externalIP:port/protocol`, the
 * maintenance drain, and the once-a-second sweep taken from the Clock port.
 * Pure: no wall clock, no timers of its own, no I/O.
 */
import { isAdapting } from './adaptive.js';
import type { Clock } from './clock.js';
import {
  checkDepthHasWait,
  type DeclaredFc,
  type EnvFc,
  type EnvWarning,
  mergeDeclared,
  readEnv,
  resolveConfig,
} from './config.js';
import type { Refusal } from './decisions.js';
import { declaredFields, type FcEffective, fcEffective } from './effective.js';
import { type EndpointRole, EndpointState } from './endpoints.js';
import { GateError } from './errors.js';
import { PARKED_REQUEST_MIB } from './fields.js';
import {
  type AdmissionRequest,
  type Anomalies,
  type Decision,
  type GateHost,
  Pool,
  type Ticket,
} from './pool.js';
import type { Waiter } from './queue.js';
import {
  checkSockMap,
  endpointId,
  inertFieldWarnings,
  nonGateFingerprint,
  type ParsedRule,
  parseRule,
  type RuleEndpoint,
} from './rule.js';

/** Period of the sweep and of the adaptive step, in ms. */
export const SWEEP_PERIOD_MS = 1000;

export interface GateOptions {
  clock: Clock;
  /** Receives waiters' turns and endings. Without one, a turn is always taken and endings are dropped. */
  host?: GateHost;
  /** Process environment (`LLB_FC_*`), read once. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Node memory in MiB, for the queue-memory warning at rule apply. */
  nodeMemoryMib?: number;
  /** Whether a data path is attached (the maintenance read-back only claims a drain when one is). @default true */
  dataPathAttached?: boolean;
}

/** How an apply changed the gate. */
export type ApplyOutcome = 'created' | 'updated_in_place' | 'recreated';

export interface ApplyResult {
  key: string;
  outcome: ApplyOutcome;
  /** Warnings to log once at apply (the queue memory bound over half of node memory). */
  warnings: string[];
}

interface StoredRule {
  parsed: ParsedRule;
  declared: DeclaredFc;
  fingerprint: string;
  /** The pool, for AI-gateway services; null for rules outside the gate. */
  pool: Pool | null;
}

/** One rule as GET returns it. */
export interface RuleView {
  serviceArguments: Record<string, unknown> & { fc_effective?: FcEffective };
  endpoints: RuleEndpoint[];
}

/** A pool's endpoints as a host's scraper and health prober see them. */
export interface TelemetryTarget {
  key: string;
  service: string;
  /** True when the pool's ceiling follows engine telemetry (scrape it). */
  adaptive: boolean;
  /** How long a scraped value is trusted, ms. */
  staleMs: number;
  endpoints: { id: string; role: EndpointRole; healthy: boolean }[];
}

/** The maintenance read-back. */
export interface MaintenanceView {
  enabled: boolean;
  refusing_new_inference: boolean;
  in_flight_requests: number;
}

const TAKE_ALL: GateHost = { granted: () => 'taken', ended: () => {} };

export class Gate {
  readonly clock: Clock;
  readonly anomalies: Anomalies = { underflow: 0, unknown_permit: 0, tenant_table_full: 0 };
  readonly envWarnings: EnvWarning[];
  readonly #env: EnvFc;
  readonly #rules = new Map<string, StoredRule>();
  readonly #host: GateHost;
  readonly #nodeMemoryMib: number | undefined;
  readonly #dataPath: boolean;
  #maintenance = false;
  readonly #stopSweep: () => void;

  constructor(o: GateOptions) {
    this.clock = o.clock;
    this.#host = o.host ?? TAKE_ALL;
    const { env, warnings } = readEnv(o.env ?? {});
    this.#env = env;
    this.envWarnings = warnings;
    this.#nodeMemoryMib = o.nodeMemoryMib;
    this.#dataPath = o.dataPathAttached !== false;
    this.#stopSweep = o.clock.every(SWEEP_PERIOD_MS, () => this.tick());
  }

  /** Stops the sweep. */
  dispose(): void {
    this.#stopSweep();
  }

  /**
   * Creates a rule, or replaces the rule with the same key. A replace keeps
   * omitted gate fields; 0/inherit return to env/default. A replace that
   * changes only gate fields applies in place; any other difference
   * re-creates the pool (its waiters end admission_drained, counts restart).
   * Throws GateError on invalid input, leaving the stored rule unchanged.
   */
  apply(input: unknown): ApplyResult {
    const parsed = parseRule(input);
    const stored = this.#rules.get(parsed.key);
    let declared: DeclaredFc;
    if (stored) declared = mergeDeclared(stored.declared, parsed.fc);
    else {
      declared = { ...parsed.fc.declared };
      checkDepthHasWait(declared, parsed.fc);
    }
    checkSockMap(parsed.base, declared.fc_expose_headers);
    const cfg = resolveConfig(declared, this.#env);
    const fingerprint = nonGateFingerprint(parsed);
    const warnings: string[] = inertFieldWarnings(parsed.key, parsed.base);
    const boundMib = cfg.queueDepth * PARKED_REQUEST_MIB;
    if (parsed.aiGateway && this.#nodeMemoryMib !== undefined && boundMib > this.#nodeMemoryMib / 2) {
      warnings.push(
        `WARNING ${parsed.key}: fc_max_queue_depth ${cfg.queueDepth} may park about ${boundMib} MiB, over half of the node's ${this.#nodeMemoryMib} MiB`,
      );
    }

    if (stored && stored.fingerprint === fingerprint && stored.pool !== null && parsed.aiGateway) {
      stored.declared = declared;
      stored.parsed = parsed;
      stored.pool.reconfigure(cfg);
      return { key: parsed.key, outcome: 'updated_in_place', warnings };
    }
    const now = this.clock.now();
    let pool: Pool | null = null;
    if (parsed.aiGateway) {
      const old = stored?.pool ?? null;
      const eps = parsed.endpoints.map((e) => {
        const id = endpointId(e);
        const s = new EndpointState(id, e.role, e.weight);
        const prev = old?.endpoints.find((x) => x.id === id);
        if (prev) {
          s.healthy = prev.healthy;
          s.warmStartMs = prev.warmStartMs;
          s.waiting = prev.waiting;
          s.waitingAtMs = prev.waitingAtMs;
          s.ttftEwmaMs = prev.ttftEwmaMs;
          s.ttftAtMs = prev.ttftAtMs;
        } else if (stored && cfg.warmupMs > 0) s.warmStartMs = now;
        return s;
      });
      pool = new Pool(cfg, eps, {
        clock: this.clock,
        host: this.#host,
        anomalies: this.anomalies,
        draining: () => this.#maintenance,
      });
    }
    if (stored?.pool) this.#retire(stored.pool);
    this.#rules.set(parsed.key, { parsed, declared, fingerprint, pool });
    return { key: parsed.key, outcome: stored ? 'recreated' : 'created', warnings };
  }

  /** Deletes a rule: its waiters end admission_drained; executing requests finish. */
  delete(key: string): void {
    const stored = this.#rules.get(key);
    if (!stored) throw new GateError('SLUICE_E_RULE_NOT_FOUND', 'key', key, 'the key of a stored rule');
    this.#rules.delete(key);
    if (stored.pool) this.#retire(stored.pool);
  }

  #retire(pool: Pool): void {
    pool.retire();
  }

  /** The pool of rule `key`, or undefined (no rule, or not an AI-gateway service). */
  pool(key: string): Pool | undefined {
    return this.#rules.get(key)?.pool ?? undefined;
  }

  /** Rule keys in insertion order. */
  keys(): string[] {
    return [...this.#rules.keys()];
  }

  /**
   * Decides one request on rule `key`. A rule outside the gate (or an
   * unknown key) bypasses uncounted with no endpoint chosen by the gate.
   * @param context any host value, returned on the permit or ticket
   */
  admit(key: string, req: AdmissionRequest, context?: unknown): Decision {
    const pool = this.#rules.get(key)?.pool;
    if (!pool) return { kind: 'bypass', endpoint: null, counted: false };
    return pool.admit(req, context);
  }

  /**
   * Ends a waiting request whose client went away (no-op once it has a permit
   * or has ended). The ticket knows its pool, so a re-created rule's new pool
   * is never touched; `key` is kept for symmetry with `admit`.
   */
  cancel(_key: string, ticket: Ticket): void {
    (ticket as Waiter).owner.cancel(ticket as Waiter);
  }

  /**
   * What a host must watch for each gated pool: its endpoints (to probe and,
   * when the pool adapts, to scrape for `vllm:num_requests_waiting`).
   */
  telemetryTargets(): TelemetryTarget[] {
    return this.pools().map(({ key, service, pool }) => ({
      key,
      service,
      adaptive: isAdapting(pool.cfg),
      staleMs: pool.cfg.telemetryStaleMs,
      endpoints: pool.endpoints.map((e) => ({ id: e.id, role: e.role, healthy: e.healthy })),
    }));
  }

  /** Records a scraped `vllm:num_requests_waiting` for an endpoint of rule `key`. */
  reportEngine(key: string, endpoint: string, numRequestsWaiting: number): boolean {
    return this.#rules.get(key)?.pool?.reportEngine(endpoint, numRequestsWaiting) ?? false;
  }

  /** Marks an endpoint of rule `key` in or out of service. */
  setEndpointHealth(key: string, endpoint: string, healthy: boolean): boolean {
    return this.#rules.get(key)?.pool?.setEndpointHealth(endpoint, healthy) ?? false;
  }

  /**
   * Enters or leaves maintenance. Entering ends every waiter of an enforcing
   * pool with admission_drained; enforcing pools then refuse new inference
   * requests gateway_draining; observe and off pools keep admitting.
   */
  setMaintenance(enabled: boolean): MaintenanceView {
    this.#maintenance = enabled;
    if (enabled) for (const p of this.#pools()) if (p.cfg.mode === 'enforce') p.drainWaiters();
    return this.maintenance();
  }

  maintenance(): MaintenanceView {
    let inflight = 0;
    for (const p of this.#pools()) inflight += p.inflight;
    return {
      enabled: this.#maintenance,
      refusing_new_inference: this.#maintenance && this.#dataPath,
      in_flight_requests: inflight,
    };
  }

  /** The sweep, once a second: timeouts, the adaptive step, waking heads where a unit is free. */
  tick(): void {
    for (const p of this.#pools()) p.tick();
  }

  /** Every rule as GET /netlox/v1/config/loadbalancer/all returns it. */
  rules(): RuleView[] {
    return [...this.#rules.values()].map((r) => {
      const serviceArguments: RuleView['serviceArguments'] = {
        ...r.parsed.base,
        ...declaredFields(r.declared),
      };
      if (r.pool) serviceArguments.fc_effective = fcEffective(r.pool);
      return { serviceArguments, endpoints: r.parsed.endpoints.map((e) => ({ ...e })) };
    });
  }

  /** Every live pool with its rule. */
  pools(): { key: string; service: string; pool: Pool }[] {
    const out: { key: string; service: string; pool: Pool }[] = [];
    for (const [key, r] of this.#rules)
      if (r.pool) out.push({ key, service: r.parsed.service, pool: r.pool });
    return out;
  }

  *#pools(): IterableIterator<Pool> {
    for (const r of this.#rules.values()) if (r.pool) yield r.pool;
  }
}

export type { Refusal };
