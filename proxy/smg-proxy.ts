/**
 * `sluice proxy --smg`: the same gate core shaped as SMG's admission
 * control. One listener in front of `--worker-urls`; every route gated but
 * the ones SMG names as bypassing (health, listing, admin, worker management;
 * an unknown route or a case variant is gated: the safe rule), every protocol
 * may wait and the body is not read until admission; a permit held to the
 * last byte of a response, or until `--request-timeout-secs` ends a stalled one; SMG's error format and `smg_*`
 * metrics (`smg_http_*` included) on `GET /metrics` of the same port.
 */
import type http from 'node:http';
import {
  type GateHost,
  isSmgBypassPath,
  type Refusal,
  renderPrometheus,
  SMG_RETRY_AFTER_S,
  SmgGate,
  type SmgSettings,
  smgResponse,
  type Ticket,
} from '../gate/index.js';
import { AcceptValve } from './accept-valve.js';
import { AuditLog, type AuditOptions } from './audit.js';
import { BackendPools, type BackendTimeouts } from './backend-pools.js';
import { BodyBudget } from './body-budget.js';
import { RealClock } from './clock.js';
import type { DecisionSink } from './decision-log.js';
import type { Exchange } from './exchange.js';
import type { Target } from './forward.js';
import {
  type Dialect,
  exchangeHost,
  internalErrorLine,
  type RefusalResponse,
  RequestHandler,
} from './handler.js';
import { type AnyRequest, type AnyResponse, ServiceListener } from './listener.js';
import { counterFamilies, decisionLogFamilies, ProxyCounters, valveFamilies } from './metrics.js';
import { EndpointMonitor, type MonitorOptions } from './monitor.js';
import { type ClientLimits, DEFAULT_LIMITS } from './proxy.js';
import { SmgHttpMetrics } from './smg-http-metrics.js';
import {
  RequestDeadlines,
  SMG_MAX_REQUEST_TIMEOUT_SECS,
  SMG_REQUEST_TIMEOUT_SECS,
} from './smg-request-timeout.js';

export interface SmgProxyOptions {
  settings: SmgSettings;
  /** Worker base URLs, `http://host:port`. */
  workerUrls: string[];
  host?: string;
  /** @default 30000 */
  port?: number;
  env?: Readonly<Record<string, string | undefined>>;
  decisionLog?: DecisionSink | null;
  monitor?: Partial<MonitorOptions>;
  limits?: Partial<ClientLimits>;
  /** Time limits of backend requests. */
  backend?: Partial<BackendTimeouts>;
  /** The rate-limited sec.ai.deny lines (stderr by default). */
  audit?: AuditOptions;
  /**
   * SMG's `--request-timeout-secs`: longest time a request sent to a worker may
   * take (and so hold its permit) before it is ended. @default 1800
   */
  requestTimeoutSecs?: number;
  /** Clock ms per real ms of the gate's clock (see `ProxyOptions.timeScale`). @default 1 */
  timeScale?: number;
}

/** Parses a worker URL into a target; throws naming the URL. */
export function workerTarget(url: string): Target {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--worker-urls: ${JSON.stringify(url)} is not a URL`);
  }
  if (u.protocol !== 'http:') throw new Error(`--worker-urls: ${url}: only http:// workers are supported`);
  const port = u.port === '' ? 80 : Number(u.port);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { id: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`, host, port };
}

const SERVICE = 'smg';

class SmgDialect implements Dialect {
  readonly service = SERVICE;
  readonly pd = false;
  #rr = 0;
  constructor(
    readonly smg: SmgGate,
    readonly workers: Target[],
    readonly monitor: EndpointMonitor,
    readonly metrics: () => string,
    readonly deadlines: RequestDeadlines,
  ) {}
  /** Gated unless SMG names the route as bypassing (`isSmgBypassPath`), on the normalised path. */
  isInference(path: string): boolean {
    return !isSmgBypassPath(path);
  }
  authenticate() {
    return { ok: true as const, tenant: undefined };
  }
  admit(req: Parameters<Dialect['admit']>[0], ex: Exchange) {
    const d = this.smg.admit(req, ex);
    // Admitted or bypassed, the request goes to a worker now (a waiter's turn arms it in the host).
    if (d.kind === 'admit' || d.kind === 'bypass') this.deadlines.arm(ex);
    return d;
  }
  cancel(ticket: Ticket): void {
    this.smg.cancel(ticket);
  }
  refusal(r: Refusal): RefusalResponse {
    const s = smgResponse(r);
    return { status: s.status, headers: s.headers, body: s.body, error: s.code };
  }
  target(): Target | undefined {
    return undefined;
  }
  pick(): Target | null {
    const n = this.workers.length;
    for (let i = 0; i < n; i++) {
      const t = this.workers[(this.#rr + i) % n]!;
      if (this.monitor.usable(SERVICE, t.id)) {
        this.#rr = (this.#rr + i + 1) % n;
        return t;
      }
    }
    return null;
  }
  unavailable(): RefusalResponse {
    const code = 'no_available_workers';
    return {
      status: 503,
      headers: { 'X-SMG-Error-Code': code, 'Retry-After': String(SMG_RETRY_AFTER_S) },
      body: { error: { type: 'Service Unavailable', code, message: 'no available workers', param: null } },
      error: code,
    };
  }
  /** `GET /metrics`, answered by the gateway itself. */
  isMetrics(req: AnyRequest): boolean {
    return req.method === 'GET' && (req.url ?? '/').split('?')[0] === '/metrics';
  }
  local(req: AnyRequest, res: AnyResponse): boolean {
    if (!this.isMetrics(req)) return false;
    const text = this.metrics();
    (res as http.ServerResponse).writeHead(200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
    });
    (res as http.ServerResponse).end(text);
    return true;
  }
}

/** The SMG-shaped gateway. */
export class SmgProxy {
  readonly clock: RealClock;
  readonly smg: SmgGate;
  readonly valve: AcceptValve;
  /** The pooled clients to the endpoints. */
  readonly pools: BackendPools;
  readonly monitor: EndpointMonitor;
  readonly counters = new ProxyCounters();
  /** The sec.ai.deny lines on stderr. */
  readonly audit: AuditLog;
  /** `smg_http_responses_total` and `smg_http_inflight_request_age_count`. */
  readonly http = new SmgHttpMetrics();
  /** `--request-timeout-secs`. */
  readonly deadlines: RequestDeadlines;
  readonly listener: ServiceListener;
  readonly #log: DecisionSink | null;

  constructor(o: SmgProxyOptions) {
    const workers = o.workerUrls.map(workerTarget);
    if (workers.length === 0) throw new Error('--worker-urls: at least one worker is required');
    this.clock = new RealClock(o.timeScale ?? 1);
    const timeoutSecs = o.requestTimeoutSecs ?? SMG_REQUEST_TIMEOUT_SECS;
    if (!Number.isInteger(timeoutSecs) || timeoutSecs < 1 || timeoutSecs > SMG_MAX_REQUEST_TIMEOUT_SECS) {
      throw new RangeError(
        `--request-timeout-secs: ${timeoutSecs} is not an integer from 1 to ${SMG_MAX_REQUEST_TIMEOUT_SECS}`,
      );
    }
    this.deadlines = new RequestDeadlines(timeoutSecs, this.clock);
    const deadlines = this.deadlines;
    // A waiter's turn sends it to a worker: its request timeout starts then.
    const host: GateHost = {
      granted(ticket, permit) {
        const taken = exchangeHost.granted(ticket, permit);
        if (taken === 'taken') deadlines.arm(ticket.context as Exchange);
        return taken;
      },
      ended: (ticket, refusal) => exchangeHost.ended(ticket, refusal),
    };
    this.smg = new SmgGate(o.settings, { clock: this.clock, host });
    this.valve = AcceptValve.fromEnv(o.env ?? process.env);
    this.pools = new BackendPools(this.valve, o.backend);
    this.#log = o.decisionLog ?? null;
    this.audit = new AuditLog(o.audit);
    const ref: { handler: RequestHandler | null } = { handler: null };
    // SMG has no gate-side endpoint state: health goes to the breaker only.
    this.monitor = new EndpointMonitor(
      { reportEngine: () => true, setEndpointHealth: () => true },
      { ...o.monitor, scrapeIntervalMs: 0 },
      (_key, id) => ref.handler?.cutQuietLegs(id, this.monitor.probeTimeoutMs),
    );
    this.monitor.sync([{ key: SERVICE, service: SERVICE, adaptive: false, gated: true, endpoints: workers }]);
    this.deadlines.onWorkerTimeout = (id) => this.monitor.legFailed(SERVICE, id);
    const limits = { ...DEFAULT_LIMITS, ...o.limits };
    const dialect = new SmgDialect(this.smg, workers, this.monitor, () => this.metricsText(), this.deadlines);
    const handler = new RequestHandler(dialect, {
      clock: this.clock,
      pools: this.pools,
      log: this.#log,
      legs: this.monitor,
      // SMG reads a waiting request's body only once it is admitted.
      bufferBodyBytes: 0,
      maxBodyBytes: limits.maxBodyBytes,
      maxJsonDepth: limits.maxJsonDepth,
      bodyTimeoutMs: limits.bodyTimeoutMs,
      bodyBudget: new BodyBudget(limits.bodyMemoryBytes),
      onRecord: (r) => {
        this.counters.record(r);
        this.audit.record(r);
        this.http.response(r.status, r.error);
      },
      onInternalError: (err, service, req) => {
        this.counters.internalErrors++;
        process.stderr.write(`${internalErrorLine(err, service, req)}\n`);
      },
    });
    ref.handler = handler;
    this.listener = new ServiceListener({
      host: o.host ?? '127.0.0.1',
      port: o.port ?? 30000,
      valve: this.valve,
      ...limits,
      onRequest: (req, res, protocol) => {
        if (!dialect.isMetrics(req)) this.http.track(res, this.clock.now());
        handler.handle(req, res, protocol);
      },
      onFault: (k) => this.counters.fault(k),
    });
  }

  async start(): Promise<void> {
    await this.listener.listen();
  }

  get port(): number {
    return this.listener.port;
  }

  metricsText(): string {
    return renderPrometheus([
      ...this.smg.collect(),
      ...this.http.collect(this.clock.now()),
      ...valveFamilies(this.valve),
      ...this.monitor.collect(),
      ...counterFamilies(this.counters),
      ...decisionLogFamilies(this.#log),
    ]);
  }

  async close(graceMs = 0): Promise<void> {
    await this.listener.close(graceMs);
    this.monitor.dispose();
    this.audit.dispose();
    this.smg.dispose();
    this.clock.dispose();
    await this.pools.destroy();
    await this.#log?.close();
  }
}
