/**
 * The real gate on loopback for a cliff or fidelity run: the proxy (`LoxiProxy`, in this process)
 * with the scenario's rule rewritten to 127.0.0.1 and pointed at emulated engines, configured and
 * switched between modes through its management API, read back through its `/metrics`; or, for
 * an SMG-dialect scenario, the SMG-shaped gateway (`SmgProxy`) with the scenario's settings.
 */
import net from 'node:net';
import type { DecisionSink } from '../proxy/decision-log.js';
import { LoxiProxy } from '../proxy/proxy.js';
import { SmgProxy } from '../proxy/smg-proxy.js';
import { smgSettingsOf } from '../sim/run/admission.js';
import type { Scenario, SmgGate as SmgSection } from '../sim/scenario/resolve.js';
import type { LiveEngine } from './engines.js';
import { UnsupportedScenarioError } from './errors.js';

/** A gate mode of the cliff test. */
export type GateMode = 'off' | 'observe' | 'enforce';

/** The proxy in front of the engines. */
export interface RealGate {
  /** Base URL the load goes to. */
  target: string;
  /** Admin API base URL (`/metrics` is there). */
  admin: string;
  /** The rule as POSTed last. */
  rule(): { serviceArguments: Record<string, unknown>; endpoints: unknown[] };
  /** Switches fc_mode with a replace POST (applied in place); resolves with the answer's outcome. */
  setMode(mode: GateMode): Promise<string>;
  /** Service in-flight and queued (0 while the mode is off), and defect anomalies, from `/metrics`. */
  gauges(): Promise<{ inflight: number; queued: number; anomalies: number }>;
  /** Waits until nothing is in flight or queued (or `timeoutMs` passes); returns the last gauges. */
  waitIdle(timeoutMs: number): Promise<{ inflight: number; queued: number; anomalies: number }>;
  /** Warnings the proxy printed. */
  warnings: string[];
  close(): Promise<void>;
}

type Gauges = Awaited<ReturnType<RealGate['gauges']>>;

/** Polls `gauges` every 50 ms until nothing is in flight or queued, or `timeoutMs` passes; returns the last reading. */
async function waitIdle(gauges: () => Promise<Gauges>, timeoutMs: number): Promise<Gauges> {
  const until = performance.now() + timeoutMs;
  let last = await gauges();
  while ((last.inflight > 0 || last.queued > 0) && performance.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    last = await gauges();
  }
  return last;
}

/** A free TCP port on 127.0.0.1 (the rule needs a real port: 0 is out of its bounds). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r, j) => {
    s.once('error', j);
    s.listen(0, '127.0.0.1', () => r());
  });
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** API key → tenant id, from the scenario's tenants. */
export function apiKeysOf(s: Scenario): Map<string, string> {
  const keys = new Map<string, string>();
  for (const t of s.clients.tenants ?? []) if (t.id && t.api_key) keys.set(t.api_key, t.id);
  return keys;
}

/** Reads one sample of a metric family for `service`, summed over matching series. */
export function metricValue(text: string, family: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${family}{`) && !line.startsWith(`${family} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (!ok) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum += v;
  }
  return sum;
}

/**
 * Starts the proxy with the scenario's rule (loxilb dialect) in `mode`, or the SMG-shaped gateway
 * with its settings (SMG dialect), on 127.0.0.1 and a free port, its endpoints the given engines.
 * @throws Error for a mode asked of an SMG scenario, or a rule the proxy refuses
 */
export async function startRealGate(
  scenario: Scenario,
  engines: readonly LiveEngine[],
  o: {
    mode?: GateMode;
    decisionLog?: DecisionSink;
    /** Run the gate on the engines' clock, this many engine ms per real ms (see `ProxyOptions.timeScale`). */
    engineTimeScale?: number;
  } = {},
): Promise<RealGate> {
  const g = scenario.gate;
  if (g.dialect !== 'loxilb') {
    if (o.mode !== undefined)
      throw new UnsupportedScenarioError('the SMG dialect has no gate modes: start its gateway without one');
    return startSmgGate(g.smg, engines, o);
  }
  const warnings: string[] = [];
  const telemetry = scenario.telemetry as { scrape_interval_s?: number };
  const proxy = new LoxiProxy({
    adminHost: '127.0.0.1',
    adminPort: 0,
    env: { ...g.env },
    decisionLog: o.decisionLog ?? null,
    credentials: { apiKeys: apiKeysOf(scenario) },
    monitor: {
      healthIntervalMs: 1000,
      ...(telemetry.scrape_interval_s
        ? { scrapeIntervalMs: (telemetry.scrape_interval_s * 1000) / (o.engineTimeScale ?? 1) }
        : {}),
    },
    warn: (l) => warnings.push(l),
    ...(o.engineTimeScale === undefined ? {} : { timeScale: o.engineTimeScale }),
  });
  await proxy.start();
  const admin = `http://127.0.0.1:${proxy.adminPort}`;
  const port = await freePort();
  const sameCount = g.rule.endpoints.length === engines.length;
  let rule = {
    serviceArguments: {
      ...g.rule.serviceArguments,
      externalIP: '127.0.0.1',
      port,
      ...(o.mode ? { fc_mode: o.mode } : {}),
    } as Record<string, unknown>,
    endpoints: engines.map((e, i) => ({
      endpointIP: '127.0.0.1',
      targetPort: e.port,
      weight: sameCount ? (g.rule.endpoints[i]?.weight ?? 1) : 1,
    })) as unknown[],
  };
  const post = async (body: unknown): Promise<string> => {
    const res = await fetch(`${admin}/netlox/v1/config/loadbalancer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new UnsupportedScenarioError(`the proxy refused the rule (${res.status}): ${text}`);
    return (JSON.parse(text) as { outcome?: string }).outcome ?? '';
  };
  try {
    await post(rule);
  } catch (err) {
    await proxy.close();
    throw err;
  }
  const gauges = async () => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    const service = `127.0.0.1:${port}`;
    return {
      inflight: metricValue(text, 'loxilb_ai_admission_inflight', { service, role: 'service' }),
      queued: metricValue(text, 'loxilb_ai_admission_queued', { service }),
      anomalies:
        metricValue(text, 'loxilb_ai_admission_anomalies_total', { kind: 'underflow' }) +
        metricValue(text, 'loxilb_ai_admission_anomalies_total', { kind: 'unknown_permit' }),
    };
  };
  return {
    target: `http://127.0.0.1:${port}`,
    admin,
    rule: () => rule,
    async setMode(mode) {
      rule = { ...rule, serviceArguments: { ...rule.serviceArguments, fc_mode: mode } };
      return post(rule);
    },
    gauges,
    waitIdle: (timeoutMs) => waitIdle(gauges, timeoutMs),
    warnings,
    close: () => proxy.close(),
  };
}

/**
 * The SMG-shaped gateway (`sluice proxy --smg`) in front of the engines, on 127.0.0.1 and a free
 * port, with the scenario's SMG settings. It has no modes and no admin API: `setMode` refuses,
 * `admin` is the gateway itself (its `/metrics`), and the gauges are read in process.
 */
async function startSmgGate(
  s: SmgSection['smg'],
  engines: readonly LiveEngine[],
  o: { decisionLog?: DecisionSink; engineTimeScale?: number },
): Promise<RealGate> {
  const port = await freePort();
  const proxy = new SmgProxy({
    settings: smgSettingsOf(s),
    workerUrls: engines.map((e) => e.url),
    host: '127.0.0.1',
    port,
    env: {},
    decisionLog: o.decisionLog ?? null,
    monitor: { healthIntervalMs: 1000 },
    ...(o.engineTimeScale === undefined ? {} : { timeScale: o.engineTimeScale }),
  });
  await proxy.start();
  const target = `http://127.0.0.1:${port}`;
  const gauges = async () => {
    const p = proxy.smg.pool;
    const a = proxy.smg.anomalies;
    return { inflight: p.inflight, queued: p.queue.length, anomalies: a.underflow + a.unknown_permit };
  };
  return {
    target,
    admin: target,
    rule: () => ({ serviceArguments: {}, endpoints: engines.map((e) => e.url) }),
    setMode: async () => {
      throw new UnsupportedScenarioError('the SMG dialect has no gate modes');
    },
    gauges,
    waitIdle: (timeoutMs) => waitIdle(gauges, timeoutMs),
    warnings: [],
    close: () => proxy.close(),
  };
}
