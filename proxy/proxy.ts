/**
 * `sluice proxy`: the gate core on the real clock behind an HTTP proxy.
 * One Gate for the process; each rule is a service with its own dual
 * protocol listener on externalIP:port; the management API on the admin
 * listener; endpoint telemetry and health; /metrics; the decision log.
 */
import { totalmem } from 'node:os';
import {
  type ApplyResult,
  collect,
  Gate,
  isPolicyError,
  type MaintenanceView,
  POLICY_ERROR_CODE,
  type Policy,
  type PolicyConditions,
  type PolicyDocument,
  type PolicySwapReport,
  parseRule,
  type RuleView,
  renderPrometheus,
} from '../gate/index.js';
import { AcceptValve } from './accept-valve.js';
import { AdminError, AdminServer, type Controller } from './admin.js';
import { AuditLog, type AuditOptions } from './audit.js';
import { BackendPools, type BackendTimeouts, type Target } from './backend-pools.js';
import { BodyBudget } from './body-budget.js';
import { RealClock } from './clock.js';
import { type CredentialOptions, unhonouredAuth } from './credentials.js';
import type { DecisionSink } from './decision-log.js';
import { exchangeHost, internalErrorLine, RequestHandler } from './handler.js';
import { DEFAULT_MAX_JSON_DEPTH } from './json-bounds.js';
import { ServiceListener } from './listener.js';
import { counterFamilies, decisionLogFamilies, ProxyCounters, valveFamilies } from './metrics.js';
import { EndpointMonitor, type MonitorOptions } from './monitor.js';
import {
  ambiguousName,
  namedByPolicy,
  policyConditions,
  policyNames,
  type RuleHealth,
} from './policy/conditions.js';
import { SqliteDeferStore } from './policy/defer-sqlite.js';
import { PolicyDeferStoreMissing, PolicyNameAmbiguous, ProxyPolicy } from './policy/proxy-policy.js';
import { RuleDialect } from './rule-dialect.js';

/** Limits of the client side. */
export interface ClientLimits {
  /** Bodies with a Content-Length up to this many bytes are read before the decision. @default 1 MiB */
  bufferBodyBytes: number;
  /** Larger request bodies are refused 413. @default 64 MiB */
  maxBodyBytes: number;
  /** Slowloris bound on a request head, in ms. @default 10000 */
  headersTimeoutMs: number;
  /** Idle keep-alive connections close after this many ms. @default 65000 */
  keepAliveTimeoutMs: number;
  /** Largest request head, in bytes. @default 16384 */
  maxHeaderBytes: number;
  /** How often head timeouts are checked, in ms. @default 1000 */
  checkIntervalMs: number;
  /** Deepest nesting of a JSON body the proxy parses (P/D requests); deeper is refused 400 `json_too_deep`. @default 128 */
  maxJsonDepth: number;
  /** Longest silence of a request body being read, in ms (408 body_timeout); 0: none. @default 30000 */
  bodyTimeoutMs: number;
  /**
   * Most bytes of request bodies being read before the decision, process-wide;
   * past it 503 proxy_body_memory_full. 0: no bound. @default 256 MiB
   */
  bodyMemoryBytes: number;
}

export const DEFAULT_LIMITS: ClientLimits = {
  bufferBodyBytes: 1024 * 1024,
  maxBodyBytes: 64 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 65_000,
  maxHeaderBytes: 16 * 1024,
  checkIntervalMs: 1_000,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
  bodyTimeoutMs: 30_000,
  bodyMemoryBytes: 256 * 1024 * 1024,
};

export interface ProxyOptions {
  /** Admin listener address. @default 127.0.0.1:11111 */
  adminHost?: string;
  adminPort?: number;
  /** Bearer token of the admin API. */
  adminToken?: string;
  /** Host names, besides the admin listener's address, the admin API answers to. @default [] */
  adminHostNames?: readonly string[];
  /** Deepest JSON nesting an admin body may have. @default 32 */
  adminMaxJsonDepth?: number;
  /** Process environment (LLB_FC_*, LLB_PD_MAX_TOTAL_INFLIGHT). @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  decisionLog?: DecisionSink | null;
  credentials?: CredentialOptions;
  monitor?: Partial<MonitorOptions>;
  limits?: Partial<ClientLimits>;
  /** Time limits of backend requests. */
  backend?: Partial<BackendTimeouts>;
  /** The rate-limited sec.ai.deny lines (stderr by default). */
  audit?: AuditOptions;
  /** Writes warnings (apply warnings, env warnings). @default stderr */
  warn?: (line: string) => void;
  /**
   * Clock ms per real ms of the gate's clock: 1 in production. A real run against engines
   * emulated at time scale X sets X, so that the gate's windows, its Retry-After and the
   * decision log's durations are in the engines' time, as in a simulation. @default 1
   */
  timeScale?: number;
  /**
   * The policy layer (`--policy FILE`, `--defer-db FILE`): the file's text and name; a class that
   * defers needs `deferDb`. Without it no request pays for a policy.
   */
  policy?: {
    text: string;
    fileName: string;
    deferDb?: string;
    deferSync?: 'FULL' | 'NORMAL';
    drainPeriodMs?: number;
  };
}

/** What GET /sluice/policy answers. */
export interface PolicyView {
  version: number;
  /** The file the policy came from, or `PUT /sluice/policy`. */
  source: string;
  classes: string[];
  /** The --defer-db file, or `memory`. */
  defer_store: string;
  document: PolicyDocument;
}

interface Service {
  key: string;
  listener: ServiceListener | null;
  dialect: RuleDialect;
  handler: RequestHandler;
}

/** The proxy process: gate, services, admin API, telemetry. */
export class LoxiProxy implements Controller {
  readonly clock: RealClock;
  readonly gate: Gate;
  readonly valve: AcceptValve;
  /** The pooled clients to the endpoints. */
  readonly pools: BackendPools;
  readonly monitor: EndpointMonitor;
  readonly counters = new ProxyCounters();
  /** The sec.ai.deny lines on stderr. */
  readonly audit: AuditLog;
  readonly limits: ClientLimits;
  /** Bytes of request bodies being read before their decision. */
  readonly bodyBudget: BodyBudget;
  /** The policy layer, or null without --policy. */
  readonly policy: ProxyPolicy | null;
  readonly #services = new Map<string, Service>();
  readonly #o: ProxyOptions;
  readonly #admin: AdminServer;
  #chain: Promise<unknown> = Promise.resolve();
  /** The policy's conditions as last computed (null: recompute), and the policy they were for. */
  #conditions: PolicyConditions | null = null;
  #conditionsFor: Policy | null = null;

  constructor(o: ProxyOptions = {}) {
    this.#o = o;
    this.clock = new RealClock(o.timeScale ?? 1);
    const env = o.env ?? process.env;
    this.gate = new Gate({
      clock: this.clock,
      host: exchangeHost,
      env,
      dataPathAttached: true,
      nodeMemoryMib: Math.floor(totalmem() / 1048576),
    });
    const warn = o.warn ?? ((l: string) => process.stderr.write(`${l}\n`));
    for (const w of this.gate.envWarnings) warn(`sluice proxy: ${JSON.stringify(w)}`);
    this.valve = AcceptValve.fromEnv(env);
    this.pools = new BackendPools(this.valve, o.backend);
    // The monitor's breaker changes reach the gate and, with a policy, the policy's conditions.
    const sink = {
      reportEngine: (key: string, ep: string, waiting: number) => this.gate.reportEngine(key, ep, waiting),
      setEndpointHealth: (key: string, ep: string, healthy: boolean) => {
        const r = this.gate.setEndpointHealth(key, ep, healthy);
        this.#conditionsChanged();
        return r;
      },
    };
    this.monitor = new EndpointMonitor(o.policy !== undefined ? sink : this.gate, o.monitor, (key, id) =>
      this.#services.get(key)?.handler.cutQuietLegs(id, this.monitor.probeTimeoutMs),
    );
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.bodyBudget = new BodyBudget(this.limits.bodyMemoryBytes);
    this.audit = new AuditLog(o.audit);
    this.policy =
      o.policy === undefined
        ? null
        : new ProxyPolicy({
            text: o.policy.text,
            fileName: o.policy.fileName,
            ...(o.policy.deferDb === undefined ? {} : { deferDb: o.policy.deferDb }),
            ...(o.policy.deferSync === undefined ? {} : { deferSync: o.policy.deferSync }),
            ...(o.policy.drainPeriodMs === undefined ? {} : { drainPeriodMs: o.policy.drainPeriodMs }),
            target: (service) => this.#policyTarget(service),
            conditions: () => this.#policyConditions(),
            poolTarget: (pool) => this.#poolTarget(pool),
            checkNames: (p) => this.#checkNames(p, this.#ruleHealth()),
            warn,
          });
    this.#admin = new AdminServer(this, {
      host: o.adminHost ?? '127.0.0.1',
      port: o.adminPort ?? 11111,
      ...(o.adminToken === undefined ? {} : { token: o.adminToken }),
      hostNames: o.adminHostNames ?? [],
      ...(o.adminMaxJsonDepth === undefined ? {} : { maxJsonDepth: o.adminMaxJsonDepth }),
    });
  }

  /** Starts the admin listener. */
  async start(): Promise<void> {
    await this.#admin.listen();
  }

  /** The admin listener's port. */
  get adminPort(): number {
    return this.#admin.port;
  }

  /** The rules as the policy's conditions see them. */
  #ruleHealth(): RuleHealth[] {
    const out: RuleHealth[] = [];
    for (const s of this.#services.values())
      out.push({ name: s.dialect.name, service: s.dialect.service, ...s.dialect.health() });
    return out;
  }

  /** The policy's conditions, recomputed after a change (breaker, maintenance, rule, swap). */
  #policyConditions(): PolicyConditions {
    const p = this.policy;
    if (p === null) return {};
    if (this.#conditions === null || this.#conditionsFor !== p.policy) {
      this.#conditionsFor = p.policy;
      this.#conditions = policyConditions(
        policyNames(p.policy),
        this.#ruleHealth(),
        this.gate.maintenance().enabled,
      );
    }
    return this.#conditions;
  }

  #conditionsChanged(): void {
    this.#conditions = null;
    this.policy?.conditionsChanged();
  }

  /** A usable endpoint of the rule named `pool`, or null (none, or maintenance). */
  #poolTarget(pool: string): { service: string; target: Target } | null {
    if (this.gate.maintenance().enabled) return null;
    for (const s of this.#services.values())
      if (s.dialect.name === pool) {
        const t = s.dialect.pick();
        return t === null ? null : { service: s.dialect.service, target: t };
      }
    return null;
  }

  /** @throws PolicyNameAmbiguous when a name of `p` is carried by two rules */
  #checkNames(p: Policy, rules: readonly RuleHealth[]): void {
    const a = ambiguousName(p, rules);
    if (a !== null)
      throw new PolicyNameAmbiguous(
        a.field,
        `${a.field}: ${JSON.stringify(a.name)} names rules ${a.services.join(' and ')} (serviceArguments.name); a policy name must map to one rule`,
      );
  }

  /** An endpoint of the service labelled `service` for a deferred request's replay, or null. */
  #policyTarget(service: string) {
    for (const s of this.#services.values()) if (s.dialect.service === service) return s.dialect.pick();
    return null;
  }

  /** The listening port of rule `key` (undefined when it has none). */
  servicePort(key: string): number | undefined {
    return this.#services.get(key)?.listener?.port;
  }

  /** Applies a rule (create or replace); mutations are serialised. */
  apply(input: unknown): Promise<ApplyResult> {
    return this.#serial(() => this.#apply(input));
  }

  async #apply(input: unknown): Promise<ApplyResult> {
    const parsed = parseRule(input);
    const secondary = (input as { secondaryIPs?: unknown }).secondaryIPs;
    if (secondary !== undefined && !(Array.isArray(secondary) && secondary.length === 0)) {
      // Accepted by the loxilb shape, but this proxy listens on externalIP only: refused, not ignored.
      throw new AdminError(
        400,
        'SLUICE_E_FIELD_VALUE',
        'secondaryIPs',
        'secondaryIPs: not served by sluice proxy (it listens on externalIP only); send [] or leave it out',
      );
    }
    this.#checkRuleName(parsed.key, parsed.base.name);
    const unhonoured = unhonouredAuth(parsed.base, this.#o.credentials ?? {});
    if (unhonoured !== null) {
      throw new AdminError(400, 'SLUICE_E_FIELD_VALUE', unhonoured.field, unhonoured.message);
    }
    let svc = this.#services.get(parsed.key);
    let fresh: ServiceListener | null = null;
    if (!svc && parsed.protocol === 'tcp') {
      const handlerRef: { h: RequestHandler | null } = { h: null };
      fresh = new ServiceListener({
        host: parsed.externalIP,
        port: parsed.port,
        valve: this.valve,
        ...this.limits,
        onRequest: (req, res, protocol) => handlerRef.h?.handle(req, res, protocol),
        onFault: (k) => this.counters.fault(k),
      });
      try {
        await fresh.listen();
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        throw new AdminError(
          409,
          'SLUICE_E_LISTEN',
          'serviceArguments.port',
          `serviceArguments: cannot listen on ${parsed.externalIP}:${parsed.port}: ${e.code ?? e.message}`,
        );
      }
      let result: ApplyResult;
      try {
        result = this.gate.apply(input);
      } catch (err) {
        fresh.destroy();
        throw err;
      }
      const dialect = new RuleDialect(this.gate, parsed, this.#o.credentials ?? {}, (s, id) =>
        this.monitor.usable(s, id),
      );
      const handler = new RequestHandler(dialect, this.#handlerDeps());
      handlerRef.h = handler;
      svc = { key: parsed.key, listener: fresh, dialect, handler };
      this.#services.set(parsed.key, svc);
      this.#afterApply(result);
      return result;
    }
    const result = this.gate.apply(input);
    if (svc) svc.dialect.update(parsed);
    else {
      const dialect = new RuleDialect(this.gate, parsed, this.#o.credentials ?? {}, (s, id) =>
        this.monitor.usable(s, id),
      );
      this.#services.set(parsed.key, {
        key: parsed.key,
        listener: null,
        dialect,
        handler: new RequestHandler(dialect, this.#handlerDeps()),
      });
    }
    this.#afterApply(result);
    return result;
  }

  #handlerDeps() {
    return {
      clock: this.clock,
      pools: this.pools,
      log: this.#o.decisionLog ?? null,
      legs: this.monitor,
      bufferBodyBytes: this.limits.bufferBodyBytes,
      maxBodyBytes: this.limits.maxBodyBytes,
      maxJsonDepth: this.limits.maxJsonDepth,
      bodyTimeoutMs: this.limits.bodyTimeoutMs,
      bodyBudget: this.bodyBudget,
      ...(this.policy === null ? {} : { policy: () => this.policy }),
      onRecord: (r: Parameters<ProxyCounters['record']>[0]) => {
        this.counters.record(r);
        this.audit.record(r);
      },
      onInternalError: (err: unknown, service: string, req: Parameters<typeof internalErrorLine>[2]) => {
        this.counters.internalErrors++;
        (this.#o.warn ?? ((l: string) => process.stderr.write(`${l}\n`)))(
          internalErrorLine(err, service, req),
        );
      },
    };
  }

  #afterApply(result: ApplyResult): void {
    const warn = this.#o.warn ?? ((l: string) => process.stderr.write(`${l}\n`));
    for (const w of result.warnings) warn(w);
    this.#syncMonitor();
    this.#conditionsChanged();
  }

  /**
   * Refuses a rule whose `serviceArguments.name` the policy uses (a degrade pool, a dependency)
   * while another rule carries it: the name would map to two rules.
   * @throws AdminError 409 naming serviceArguments.name
   */
  #checkRuleName(key: string, name: unknown): void {
    const p = this.policy;
    if (p === null || typeof name !== 'string' || !namedByPolicy(policyNames(p.policy), name)) return;
    for (const s of this.#services.values())
      if (s.key !== key && s.dialect.name === name)
        throw new AdminError(
          409,
          'SLUICE_E_FIELD_VALUE',
          'serviceArguments.name',
          `serviceArguments.name: ${JSON.stringify(name)} is already the name of rule ${s.dialect.service}, and the policy names it (a degrade pool or a dependency); a policy name must map to one rule`,
        );
  }

  #syncMonitor(): void {
    const rules = [];
    for (const { key, service, adaptive, endpoints } of this.gate.telemetryTargets()) {
      const svc = this.#services.get(key);
      if (!svc) continue;
      rules.push({
        key,
        service,
        adaptive,
        gated: true,
        endpoints: endpoints.map((e) => {
          const t = svc.dialect.target(e.id)!;
          return { id: e.id, host: t.host, port: t.port };
        }),
      });
    }
    this.monitor.sync(rules);
  }

  /** Deletes a rule: its waiters are drained 503, its listener stops; executing requests finish. */
  remove(key: string): Promise<void> {
    return this.#serial(async () => {
      this.gate.delete(key);
      const svc = this.#services.get(key);
      this.#services.delete(key);
      this.#syncMonitor();
      this.#conditionsChanged();
      if (svc?.listener) void svc.listener.close();
    });
  }

  rules(): RuleView[] {
    return this.gate.rules();
  }

  setMaintenance(enabled: boolean): MaintenanceView {
    const v = this.gate.setMaintenance(enabled);
    this.#conditionsChanged();
    return v;
  }

  maintenance(): MaintenanceView {
    return this.gate.maintenance();
  }

  /** GET /sluice/policy: the policy in force. */
  policyView(): PolicyView | null {
    const p = this.policy;
    if (p === null) return null;
    return {
      version: p.version,
      source: p.source.fileName,
      classes: p.policy.classes.map((c) => c.name),
      defer_store: p.store instanceof SqliteDeferStore ? p.store.file : 'memory',
      document: p.policy.document,
    };
  }

  /**
   * PUT /sluice/policy: replaces the policy at once with the document `body` (JSON, the policy
   * file's shape). A refused one leaves the old one in force.
   * @throws AdminError 409 without --policy; 400 SLUICE_E_POLICY naming the field
   */
  policySwap(body: unknown): { version: number; report: PolicySwapReport } {
    const p = this.policy;
    if (p === null)
      throw new AdminError(
        409,
        'SLUICE_E_POLICY_OFF',
        'policy',
        'the proxy runs without a policy: start it with --policy FILE to swap one at runtime',
      );
    try {
      return p.swap(JSON.stringify(body, null, 2), 'PUT /sluice/policy');
    } catch (err) {
      if (isPolicyError(err))
        throw new AdminError(400, POLICY_ERROR_CODE, err.issues[0]?.path ?? 'policy', err.message);
      if (err instanceof PolicyDeferStoreMissing) throw new AdminError(400, err.code, 'classes', err.message);
      if (err instanceof PolicyNameAmbiguous) throw new AdminError(400, err.code, err.field, err.message);
      throw err;
    }
  }

  metricsText(): string {
    return (
      renderPrometheus([
        ...collect(this.gate),
        ...valveFamilies(this.valve),
        ...this.monitor.collect(),
        ...counterFamilies(this.counters),
        ...decisionLogFamilies(this.#o.decisionLog ?? null),
      ]) + (this.policy === null ? '' : this.policy.metrics())
    );
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#chain.then(fn, fn);
    this.#chain = p.catch(() => {});
    return p;
  }

  /** Stops everything: listeners (after `graceMs`), admin, telemetry, timers. */
  async close(graceMs = 0): Promise<void> {
    // Waiters of the policy's queues are answered 503 first; deferred items stay in the store.
    this.policy?.stop();
    await Promise.all([...this.#services.values()].map((s) => s.listener?.close(graceMs)));
    this.#services.clear();
    await this.policy?.close(graceMs);
    await this.#admin.close();
    this.monitor.dispose();
    this.audit.dispose();
    this.gate.dispose();
    this.clock.dispose();
    await this.pools.destroy();
    await this.#o.decisionLog?.close();
  }
}
