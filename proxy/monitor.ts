/**
 * Endpoint telemetry and health: scrapes each endpoint's `/metrics` for
 * rules that adapt (every `scrapeIntervalMs`, parsed as Prometheus text,
 * `vllm:num_requests_waiting` reported to the gate), probes `GET /health`
 * on every gated endpoint, and keeps a circuit breaker per endpoint that
 * takes it out of service after consecutive failures (probes or backend
 * legs) and brings it back on a successful probe once it has been open
 * `breakerOpenMs` (the gate then starts its warm-up).
 */
import http from 'node:http';
import type { Family } from '../gate/index.js';
import type { LegObserver } from './handler.js';
import { numRequestsWaiting } from './prom-text.js';

export interface MonitorOptions {
  /** @default 10000 */
  scrapeIntervalMs: number;
  /** @default 5000; 0 turns probes off */
  healthIntervalMs: number;
  /** @default '/health' */
  healthPath: string;
  /** Deadline of a scrape or probe, first byte sent to last byte received, in ms; a late one fails. @default 2000 */
  probeTimeoutMs: number;
  /** Consecutive failures that open the breaker. @default 3 */
  breakerFailures: number;
  /** Least time the breaker stays open before a good probe closes it, in ms. @default 5000 */
  breakerOpenMs: number;
}

export const DEFAULT_MONITOR: MonitorOptions = {
  scrapeIntervalMs: 10_000,
  healthIntervalMs: 5_000,
  healthPath: '/health',
  probeTimeoutMs: 2_000,
  breakerFailures: 3,
  breakerOpenMs: 5_000,
};

/** What the monitor needs of the gate. */
export interface HealthSink {
  reportEngine(key: string, endpoint: string, waiting: number): boolean;
  setEndpointHealth(key: string, endpoint: string, healthy: boolean): boolean;
}

/** One monitored rule. */
export interface MonitoredRule {
  key: string;
  service: string;
  /** Whether the rule's pool adapts (its endpoints are scraped). */
  adaptive: boolean;
  /** Whether the rule is gated (its endpoints are probed). */
  gated: boolean;
  endpoints: { id: string; host: string; port: number }[];
}

interface EpState {
  rule: MonitoredRule;
  id: string;
  host: string;
  port: number;
  /** Consecutive failed probes. */
  probeFailures: number;
  /** Consecutive failed backend legs. */
  legFailures: number;
  open: boolean;
  openedAt: number;
  scrapeOk: number;
  scrapeErr: number;
  opens: number;
  closes: number;
  busyScrape: boolean;
  busyProbe: boolean;
}

export class EndpointMonitor implements LegObserver {
  readonly #o: MonitorOptions;
  readonly #sink: HealthSink;
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  #eps = new Map<string, EpState>();
  readonly #timers: NodeJS.Timeout[] = [];

  readonly #onOpen: (key: string, endpointId: string) => void;

  /**
   * @param onOpen told when an endpoint's breaker opens (its silent legs are
   *   then cut), with the rule key and the endpoint
   */
  constructor(
    sink: HealthSink,
    o: Partial<MonitorOptions> = {},
    onOpen: (key: string, endpointId: string) => void = () => {},
  ) {
    this.#sink = sink;
    this.#onOpen = onOpen;
    this.#o = { ...DEFAULT_MONITOR, ...o };
    if (this.#o.scrapeIntervalMs > 0) this.#every(this.#o.scrapeIntervalMs, () => this.scrapeAll());
    if (this.#o.healthIntervalMs > 0) this.#every(this.#o.healthIntervalMs, () => this.probeAll());
  }

  #every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.#timers.push(t);
  }

  /** Replaces the monitored set, keeping the state of endpoints present before. */
  sync(rules: readonly MonitoredRule[]): void {
    const next = new Map<string, EpState>();
    for (const rule of rules) {
      for (const e of rule.endpoints) {
        const k = `${rule.service}|${e.id}`;
        const prev = this.#eps.get(k);
        if (prev) {
          prev.rule = rule;
          next.set(k, prev);
          if (prev.open) this.#sink.setEndpointHealth(rule.key, e.id, false);
        } else {
          next.set(k, {
            rule,
            ...e,
            probeFailures: 0,
            legFailures: 0,
            open: false,
            openedAt: 0,
            scrapeOk: 0,
            scrapeErr: 0,
            opens: 0,
            closes: 0,
            busyScrape: false,
            busyProbe: false,
          });
        }
      }
    }
    this.#eps = next;
  }

  /** Time limit of a scrape or probe, in ms (also the quiet time after which a dead endpoint's legs are cut). */
  get probeTimeoutMs(): number {
    return this.#o.probeTimeoutMs;
  }

  /** True unless the endpoint's breaker is open. */
  usable(service: string, endpointId: string): boolean {
    return this.#eps.get(`${service}|${endpointId}`)?.open !== true;
  }

  legFailed(service: string, endpointId: string): void {
    const s = this.#eps.get(`${service}|${endpointId}`);
    if (!s) return;
    s.legFailures++;
    this.#check(s);
  }

  legOk(service: string, endpointId: string): void {
    const s = this.#eps.get(`${service}|${endpointId}`);
    if (s) s.legFailures = 0;
  }

  #check(s: EpState): void {
    const n = this.#o.breakerFailures;
    if (s.open || (s.probeFailures < n && s.legFailures < n)) return;
    s.open = true;
    s.opens++;
    s.openedAt = Date.now();
    this.#sink.setEndpointHealth(s.rule.key, s.id, false);
    this.#onOpen(s.rule.key, s.id);
    if (this.#o.healthIntervalMs <= 0 || !s.rule.gated) {
      // No probe will vouch for it: half-open after the open time, and one more failure re-opens it.
      const t = setTimeout(() => {
        if (this.#eps.get(`${s.rule.service}|${s.id}`) !== s || !s.open) return;
        s.legFailures = n - 1;
        this.#close(s);
      }, this.#o.breakerOpenMs);
      t.unref();
    }
  }

  #close(s: EpState): void {
    s.open = false;
    s.closes++;
    this.#sink.setEndpointHealth(s.rule.key, s.id, true);
  }

  #probed(s: EpState, ok: boolean): void {
    if (!ok) {
      s.probeFailures++;
      this.#check(s);
      return;
    }
    s.probeFailures = 0;
    if (s.open && Date.now() - s.openedAt >= this.#o.breakerOpenMs) {
      s.legFailures = 0;
      this.#close(s);
    }
  }

  /** One scrape round over the endpoints of adaptive rules. */
  scrapeAll(): void {
    for (const s of this.#eps.values()) {
      if (!s.rule.adaptive || s.busyScrape) continue;
      s.busyScrape = true;
      this.#get(s, '/metrics', (status, body) => {
        s.busyScrape = false;
        const waiting = status === 200 && body !== null ? numRequestsWaiting(body) : null;
        if (waiting === null) {
          s.scrapeErr++;
          return;
        }
        s.scrapeOk++;
        this.#sink.reportEngine(s.rule.key, s.id, waiting);
      });
    }
  }

  /** One probe round over the endpoints of gated rules. */
  probeAll(): void {
    for (const s of this.#eps.values()) {
      if (!s.rule.gated || s.busyProbe) continue;
      s.busyProbe = true;
      this.#get(s, this.#o.healthPath, (status) => {
        s.busyProbe = false;
        this.#probed(s, status >= 200 && status < 300);
      });
    }
  }

  /**
   * GETs `path` of the endpoint within `probeTimeoutMs` from start to last
   * byte (a response that trickles counts as failed when the deadline passes;
   * the socket is destroyed), then calls `done` once.
   */
  #get(s: EpState, path: string, done: (status: number, body: string | null) => void): void {
    let finished = false;
    const end = (status: number, body: string | null): void => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      done(status, body);
    };
    const deadline = setTimeout(() => {
      end(0, null);
      req.destroy(new Error('deadline'));
    }, this.#o.probeTimeoutMs);
    deadline.unref();
    const req = http.get({ host: s.host, port: s.port, path, agent: this.#agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 8 * 1024 * 1024) chunks.push(c);
      });
      res.on('end', () => end(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
      res.on('error', () => end(0, null));
      res.on('close', () => end(0, null));
    });
    req.on('error', () => end(0, null));
  }

  /** The monitor's metric families. */
  collect(): Family[] {
    const scrape: Family = {
      name: 'loxilb_ai_worker_scrape_total',
      type: 'counter',
      help: 'Scrapes of engine /metrics by result.',
      samples: [],
    };
    const healthy: Family = {
      name: 'loxilb_ai_endpoint_healthy',
      type: 'gauge',
      help: 'Endpoint in service (1) or taken out by its circuit breaker (0).',
      samples: [],
    };
    const breaker: Family = {
      name: 'loxilb_ai_endpoint_breaker_transitions_total',
      type: 'counter',
      help: 'Circuit breaker transitions per endpoint: to="open" out of service, to="closed" back.',
      samples: [],
    };
    for (const s of this.#eps.values()) {
      const l = { service: s.rule.service, endpoint: s.id };
      if (s.rule.adaptive) {
        scrape.samples.push({ name: scrape.name, labels: { ...l, result: 'ok' }, value: s.scrapeOk });
        scrape.samples.push({ name: scrape.name, labels: { ...l, result: 'error' }, value: s.scrapeErr });
      }
      healthy.samples.push({ name: healthy.name, labels: l, value: s.open ? 0 : 1 });
      breaker.samples.push({ name: breaker.name, labels: { ...l, to: 'open' }, value: s.opens });
      breaker.samples.push({ name: breaker.name, labels: { ...l, to: 'closed' }, value: s.closes });
    }
    return [scrape, healthy, breaker];
  }

  dispose(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#agent.destroy();
  }
}
