/**
 * The four phases of bench/proxy.bench.ts. Each starts the engine with its
 * own timings, points the proxy's rule and a fresh HAProxy at it, and runs
 * every target in turn (order rotated per repetition).
 */

import type { RunningHaproxy } from '../../cliff/haproxy-process.js';
import type { EngineConfig } from './engine-child.js';
import { type HaproxyRule, startBenchHaproxy } from './haproxy.js';
import { Child } from './ipc.js';
import type { LoopResult, Workload } from './loadgen-child.js';
import { freePort, median, quantile, runWrk, withCpu } from './measure.js';
import type { GateRule, LoopStats, MemoryReading } from './proxy-child.js';

/** `relay`: a bare Node http relay (relay-child.ts), the floor of Node's http stack. */
export type Target = 'direct' | 'proxy' | 'haproxy' | 'relay';

export interface Ctx {
  engine: Child;
  loadgen: Child;
  proxy: Child;
  relay: Child;
  /** The running HAProxy, if any. */
  ha: { p: RunningHaproxy | null };
  /** The HAProxy binary, or null when it is not installed (its column is skipped). */
  haPath: string | null;
  wrk: string | null;
  dir: string;
  sutCpu: number | null;
  loadCpu: number | null;
  proxyFlags: string[];
  log: (line: string) => void;
}

export const MODEL = 'sluice/fixed';
export const PATH = '/v1/completions';
const PROMPT = 'Benchmark prompt: say hello to the proxy in a few words.';

/** Gate rule of the throughput and latency phases: a ceiling no phase reaches. */
export const RULE = { ceiling: 1024, depth: 1024, waitMs: 5_000 };

/**
 * An integer knob from the environment, `fallback` when unset.
 * @throws Error naming the variable, its value and the bounds
 */
function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max)
    throw new Error(`${name}: ${JSON.stringify(raw)} is not an integer from ${min} to ${max}`);
  return v;
}

export const LAT = {
  streams: envInt('BENCH_PROXY_STREAMS', 500, 1, 20_000),
  ttftMs: 100,
  itlMs: 40,
  tokens: 16,
  warmupMs: 1_500,
  measureMs: 4_000,
  /** Repetitions per target, interleaved across the targets; the figures are their medians. */
  reps: envInt('BENCH_PROXY_LATENCY_REPS', 3, 1, 51),
};
export const RPS = {
  connections: envInt('BENCH_PROXY_RPS_CONNECTIONS', 256, 1, 10_000),
  seconds: 3,
  reps: 3,
};
export const SSE = { streams: 64, itlMs: 2, tokens: 256, warmupMs: 500, measureMs: 3_000, reps: 3 };
export const PARK = { ceiling: 16, steps: [1_000, 1_000], waitMs: 3_600_000, depth: 4_096 };

export function body(o: { tokens: number; stream: boolean }): string {
  return JSON.stringify({ model: MODEL, prompt: PROMPT, max_tokens: o.tokens, stream: o.stream });
}

interface Ports {
  direct: number;
  proxy: number;
  haproxy: number | null;
  relay: number | null;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

function targets(ports: Ports, rep: number): Target[] {
  const all: Target[] = ['direct', 'proxy'];
  if (ports.haproxy !== null) all.push('haproxy');
  if (ports.relay !== null) all.push('relay');
  return all.map((_, i) => all[(i + rep) % all.length]!);
}

function portOf(ports: Ports, t: Target): number {
  const p = ports[t];
  if (p === null) throw new Error(`no ${t}`);
  return p;
}

/** Starts the engine with `cfg`, points the proxy's rule and a fresh HAProxy at it. */
async function setup(
  c: Ctx,
  cfg: EngineConfig,
  rule: Omit<GateRule, 'enginePort'>,
  withRelay: boolean,
): Promise<Ports> {
  await c.ha.p?.close();
  c.ha.p = null;
  const enginePort = await c.engine.call<number>('start', cfg);
  const proxyPort = await c.proxy.call<number>('rule', { ...rule, enginePort } satisfies GateRule);
  let haPort: number | null = null;
  if (c.haPath !== null) {
    haPort = await freePort();
    const hr: HaproxyRule = { port: haPort, enginePort, ...rule };
    c.ha.p = await startBenchHaproxy(c.haPath, hr, c.sutCpu);
  }
  const relay = withRelay ? await c.relay.call<number>('target', enginePort) : null;
  return { direct: enginePort, proxy: proxyPort, haproxy: haPort, relay };
}

function pids(c: Ctx, t: Target): Record<string, number> {
  const sut =
    t === 'proxy' ? c.proxy.pid : t === 'haproxy' ? (c.ha.p?.pid ?? -1) : t === 'relay' ? c.relay.pid : -1;
  return { sut, engine: c.engine.pid, loadgen: c.loadgen.pid };
}

/** CPU cores used per process during a run (sut, engine, loadgen, foreign = other workloads). */
export type CpuShare = Record<string, number>;

function share(cpu: Record<string, number>, wallS: number): CpuShare {
  return Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, r2(v / wallS)]));
}

function notOk(r: LoopResult): number {
  return (
    r.failures + r.unfinished + Object.entries(r.statuses).reduce((a, [k, v]) => a + (k === '200' ? 0 : v), 0)
  );
}

const fmtCpu = (s: CpuShare) =>
  Object.entries(s)
    .filter(([, v]) => !Number.isNaN(v))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

const fmtLoop = (l: LoopStats) =>
  `late p50 ${l.late_p50_ms} p99 ${l.late_p99_ms} max ${l.late_max_ms} ms, gc ${l.gc_count} pauses ${l.gc_total_ms} ms (full ${l.gc_major_ms}; ${l.gc_minor_count} scavenges, max ${l.gc_minor_max_ms}) max ${l.gc_max_ms} ms`;

// ---------------------------------------------------------------- latency

export interface LatencySample {
  rep: number;
  n: number;
  ttft_p50: number;
  ttft_p99: number;
  e2e_p50: number;
  e2e_p99: number;
  not_ok: number;
  cpu: CpuShare;
  /** Proxy only: its event loop during the run. */
  proxy_loop?: LoopStats;
}

export interface LatencyResult {
  samples: Record<Target, LatencySample[]>;
  /** Medians over repetitions. */
  median: Record<Target, { ttft_p50: number; ttft_p99: number; e2e_p50: number; e2e_p99: number } | null>;
  engineLagMsMax: number | null;
}

export async function latencyPhase(c: Ctx): Promise<LatencyResult> {
  const cycle = LAT.ttftMs + (LAT.tokens - 1) * LAT.itlMs;
  c.log(
    `\n[latency] ${LAT.streams} concurrent SSE streams (closed loop, starts spread over ${cycle} ms), engine TTFT ${LAT.ttftMs} ms + ${LAT.tokens - 1} x ${LAT.itlMs} ms, ${LAT.reps} x ${LAT.measureMs / 1000} s per target`,
  );
  const ports = await setup(c, { ttftMs: LAT.ttftMs, itlMs: LAT.itlMs, maxNumSeqs: 2_048 }, RULE, true);
  const work = (port: number, measureMs: number): Workload => ({
    port,
    path: PATH,
    body: body({ tokens: LAT.tokens, stream: true }),
    concurrency: LAT.streams,
    staggerMs: cycle,
    warmupMs: LAT.warmupMs,
    measureMs,
    thinkMs: 0,
  });
  for (const t of targets(ports, 0))
    await c.loadgen.call<LoopResult>('closedLoop', work(portOf(ports, t), 1_000));
  const samples: Record<Target, LatencySample[]> = { direct: [], proxy: [], haproxy: [], relay: [] };
  for (let rep = 0; rep < LAT.reps; rep++) {
    for (const t of targets(ports, rep)) {
      // The proxy's loop and GC figures cover this run only (warm-up included), not the idle time before it.
      if (t === 'proxy') await c.proxy.call<LoopStats>('loop');
      const {
        result: r,
        cpu,
        wallS,
      } = await withCpu(pids(c, t), () =>
        c.loadgen.call<LoopResult>('closedLoop', work(portOf(ports, t), LAT.measureMs)),
      );
      const s: LatencySample = {
        rep,
        n: r.completed,
        ttft_p50: r2(quantile(r.ttft, 0.5)),
        ttft_p99: r2(quantile(r.ttft, 0.99)),
        e2e_p50: r2(quantile(r.e2e, 0.5)),
        e2e_p99: r2(quantile(r.e2e, 0.99)),
        not_ok: notOk(r),
        cpu: share(cpu, wallS),
      };
      if (t === 'proxy') s.proxy_loop = await c.proxy.call<LoopStats>('loop');
      samples[t].push(s);
      c.log(
        `  rep ${rep + 1} ${t.padEnd(7)} n=${s.n} TTFT p50 ${s.ttft_p50} p99 ${s.ttft_p99} | e2e p50 ${s.e2e_p50} p99 ${s.e2e_p99} ms | cores: ${fmtCpu(s.cpu)}${s.proxy_loop ? ` | proxy loop ${fmtLoop(s.proxy_loop)}` : ''}${s.not_ok ? ` | NOT OK ${s.not_ok} ${JSON.stringify(r.statuses)}` : ''}`,
      );
    }
  }
  const med = (t: Target) => {
    const xs = samples[t];
    if (xs.length === 0) return null;
    return {
      ttft_p50: r2(median(xs.map((x) => x.ttft_p50))),
      ttft_p99: r2(median(xs.map((x) => x.ttft_p99))),
      e2e_p50: r2(median(xs.map((x) => x.e2e_p50))),
      e2e_p99: r2(median(xs.map((x) => x.e2e_p99))),
    };
  };
  const stats = await c.engine.call<{ lagMsMax: number } | null>('stats');
  return {
    samples,
    median: { direct: med('direct'), proxy: med('proxy'), haproxy: med('haproxy'), relay: med('relay') },
    engineLagMsMax: stats ? r2(stats.lagMsMax) : null,
  };
}

// ---------------------------------------------------------------- requests/s

export interface RpsSample {
  rep: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  not_ok: number;
  /** CPU µs of the system under test per request. */
  sut_cpu_us_per_req: number;
  cpu: CpuShare;
  /** Proxy only: finished exchanges by `status reason`. */
  finished?: Record<string, number>;
  proxy_loop?: LoopStats;
}

export interface RpsResult {
  generator: string;
  samples: Record<Target, RpsSample[]>;
  median: Record<Target, { rps: number; p50_ms: number; p99_ms: number; sut_cpu_us_per_req: number } | null>;
}

export async function rpsPhase(c: Ctx): Promise<RpsResult> {
  const generator = c.wrk
    ? `${c.wrk} -t1 -c${RPS.connections}`
    : `node raw keep-alive generator (child process), ${RPS.connections} connections`;
  c.log(
    `\n[rps] short non-streaming requests (max_tokens 1, engine TTFT 0), ${generator}, ${RPS.reps} x ${RPS.seconds} s per target`,
  );
  const ports = await setup(c, { ttftMs: 0, itlMs: 0, maxNumSeqs: 2_048 }, RULE, true);
  const shortBody = body({ tokens: 1, stream: false });
  const run = async (t: Target, seconds: number) => {
    const port = portOf(ports, t);
    if (c.wrk) {
      const w = await runWrk({
        dir: c.dir,
        url: `http://127.0.0.1:${port}${PATH}`,
        body: shortBody,
        connections: RPS.connections,
        seconds,
        cpu: c.loadCpu,
      });
      return { rps: w.rps, p50: w.p50Ms, p99: w.p99Ms, bad: w.non2xx + w.socketErrors };
    }
    const r = await c.loadgen.call<LoopResult>('closedLoop', {
      port,
      path: PATH,
      body: shortBody,
      concurrency: RPS.connections,
      staggerMs: 0,
      warmupMs: 300,
      measureMs: seconds * 1000,
      thinkMs: 0,
    } satisfies Workload);
    return {
      rps: r.completedInWindow / r.windowS,
      p50: quantile(r.e2e, 0.5),
      p99: quantile(r.e2e, 0.99),
      bad: notOk(r),
    };
  };
  for (const t of targets(ports, 0)) await run(t, 2);
  await c.proxy.call('finished');
  const samples: Record<Target, RpsSample[]> = { direct: [], proxy: [], haproxy: [], relay: [] };
  for (let rep = 0; rep < RPS.reps; rep++) {
    for (const t of targets(ports, rep)) {
      if (t === 'proxy') await c.proxy.call('loop');
      const { result: r, cpu, wallS } = await withCpu(pids(c, t), () => run(t, RPS.seconds));
      const s: RpsSample = {
        rep,
        rps: Math.round(r.rps),
        p50_ms: r2(r.p50),
        p99_ms: r2(r.p99),
        not_ok: r.bad,
        sut_cpu_us_per_req: r2(((cpu.sut ?? Number.NaN) * 1e6) / (r.rps * wallS)),
        cpu: share(cpu, wallS),
      };
      if (t === 'proxy') {
        s.proxy_loop = await c.proxy.call<LoopStats>('loop');
        s.finished = (await c.proxy.call<{ finished: Record<string, number> }>('finished')).finished;
      }
      samples[t].push(s);
      c.log(
        `  rep ${rep + 1} ${t.padEnd(7)} ${s.rps} req/s, p50 ${s.p50_ms} p99 ${s.p99_ms} ms | cores: ${fmtCpu(s.cpu)}${s.proxy_loop ? ` | proxy loop ${fmtLoop(s.proxy_loop)}` : ''}${s.not_ok ? ` | NOT OK ${s.not_ok}${s.finished ? ` ${JSON.stringify(s.finished)}` : ''}` : ''}`,
      );
    }
  }
  const med = (t: Target) => {
    const xs = samples[t];
    if (xs.length === 0) return null;
    return {
      rps: Math.round(median(xs.map((x) => x.rps))),
      p50_ms: r2(median(xs.map((x) => x.p50_ms))),
      p99_ms: r2(median(xs.map((x) => x.p99_ms))),
      sut_cpu_us_per_req: r2(median(xs.map((x) => x.sut_cpu_us_per_req))),
    };
  };
  return {
    generator,
    samples,
    median: { direct: med('direct'), proxy: med('proxy'), haproxy: med('haproxy'), relay: med('relay') },
  };
}

// ---------------------------------------------------------------- SSE events/s

export interface SseSample {
  rep: number;
  events_per_s: number;
  not_ok: number;
  cpu: CpuShare;
  proxy_loop?: LoopStats;
}

export interface SseResult {
  samples: Record<Target, SseSample[]>;
  median: Record<Target, number | null>;
}

export async function ssePhase(c: Ctx): Promise<SseResult> {
  c.log(
    `\n[sse] ${SSE.streams} concurrent streams of ${SSE.tokens} tokens, engine TTFT 0, ITL ${SSE.itlMs} ms (offered ${Math.round((SSE.streams * 1000) / SSE.itlMs)} events/s), ${SSE.reps} x ${SSE.measureMs / 1000} s per target`,
  );
  const ports = await setup(c, { ttftMs: 0, itlMs: SSE.itlMs, maxNumSeqs: 2_048 }, RULE, false);
  const work = (port: number, measureMs: number): Workload => ({
    port,
    path: PATH,
    body: body({ tokens: SSE.tokens, stream: true }),
    concurrency: SSE.streams,
    staggerMs: SSE.tokens * SSE.itlMs,
    warmupMs: SSE.warmupMs,
    measureMs,
    thinkMs: 0,
  });
  for (const t of targets(ports, 0))
    await c.loadgen.call<LoopResult>('closedLoop', work(portOf(ports, t), 1_000));
  const samples: Record<Target, SseSample[]> = { direct: [], proxy: [], haproxy: [], relay: [] };
  for (let rep = 0; rep < SSE.reps; rep++) {
    for (const t of targets(ports, rep)) {
      const {
        result: r,
        cpu,
        wallS,
      } = await withCpu(pids(c, t), () =>
        c.loadgen.call<LoopResult>('closedLoop', work(portOf(ports, t), SSE.measureMs)),
      );
      const s: SseSample = {
        rep,
        events_per_s: Math.round(r.eventsInWindow / r.windowS),
        not_ok: notOk(r),
        cpu: share(cpu, wallS),
      };
      samples[t].push(s);
      c.log(
        `  rep ${rep + 1} ${t.padEnd(7)} ${s.events_per_s} events/s | cores: ${fmtCpu(s.cpu)}${s.proxy_loop ? ` | proxy loop ${fmtLoop(s.proxy_loop)}` : ''}${s.not_ok ? ` | NOT OK ${s.not_ok}` : ''}`,
      );
    }
  }
  await c.ha.p?.close();
  c.ha.p = null;
  const med = (t: Target) =>
    samples[t].length ? Math.round(median(samples[t].map((x) => x.events_per_s))) : null;
  return {
    samples,
    median: { direct: med('direct'), proxy: med('proxy'), haproxy: med('haproxy'), relay: med('relay') },
  };
}

// ---------------------------------------------------------------- parking

export interface ParkResult {
  parked: number;
  memory: MemoryReading[];
  rss_bytes_per_request: number;
  heap_bytes_per_request: number;
  external_bytes_per_request: number;
  rss_marginal_bytes_per_request: number;
  heap_marginal_bytes_per_request: number;
  /** max(RSS, heap + external) per parked request. */
  bytes_per_parked_request: number;
  engine_requests_seen: number | null;
  answered_while_parked: Record<string, number>;
  released_to_zero: boolean;
}

async function until(cond: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

/** Runs in a fresh proxy process (replaces `c.proxy`), so earlier phases leave no slack in its heap. */
export async function parkPhase(c: Ctx): Promise<ParkResult> {
  c.log(
    `\n[park] a fresh proxy process; ceiling ${PARK.ceiling} held by never-ending requests, then ${PARK.steps.join(' + ')} HTTP/1.1 requests parked (one connection each, Content-Length body, read before the decision)`,
  );
  await c.proxy.call('stop');
  await c.proxy.kill();
  c.proxy = new Child('proxy', 'proxy-child.ts', { cpu: c.sutCpu, nodeFlags: c.proxyFlags });
  await c.proxy.ready;
  // warm the fresh process's request path (JIT, agent, buffers) before the baseline
  let ePort = await c.engine.call<number>('start', {
    ttftMs: 0,
    itlMs: 0,
    maxNumSeqs: 2_048,
  } satisfies EngineConfig);
  let pPort = await c.proxy.call<number>('rule', { ...RULE, enginePort: ePort } satisfies GateRule);
  await c.loadgen.call<LoopResult>('closedLoop', {
    port: pPort,
    path: PATH,
    body: body({ tokens: 1, stream: false }),
    concurrency: 16,
    staggerMs: 0,
    warmupMs: 0,
    measureMs: 1_000,
    thinkMs: 0,
  } satisfies Workload);
  ePort = await c.engine.call<number>('start', {
    ttftMs: 3_600_000,
    itlMs: 0,
    maxNumSeqs: 64,
  } satisfies EngineConfig);
  pPort = await c.proxy.call<number>('rule', {
    ceiling: PARK.ceiling,
    depth: PARK.depth,
    waitMs: PARK.waitMs,
    enginePort: ePort,
  } satisfies GateRule);
  const proxy = c.proxy;
  const occ = () => proxy.call<{ inflight: number; queued: number }>('occupancy');
  const parkBody = body({ tokens: 16, stream: true });
  await c.loadgen.call('park', { port: pPort, path: PATH, body: parkBody, n: PARK.ceiling });
  if (!(await until(async () => (await occ()).inflight === PARK.ceiling, 10_000)))
    throw new Error(`parking: ${JSON.stringify(await occ())} executing, expected ${PARK.ceiling}`);
  await new Promise((r) => setTimeout(r, 300));
  const memory: MemoryReading[] = [await proxy.call<MemoryReading>('mem')];
  c.log(`  executing ${PARK.ceiling}, parked 0: ${JSON.stringify(memory[0])}`);
  let parked = 0;
  for (const n of PARK.steps) {
    await c.loadgen.call('park', { port: pPort, path: PATH, body: parkBody, n });
    parked += n;
    const want = parked;
    if (!(await until(async () => (await occ()).queued === want, 20_000)))
      throw new Error(`parking: ${JSON.stringify(await occ())}, expected ${want} queued`);
    await new Promise((r) => setTimeout(r, 300));
    memory.push(await proxy.call<MemoryReading>('mem'));
    c.log(`  executing ${PARK.ceiling}, parked ${want}: ${JSON.stringify(memory.at(-1))}`);
  }
  const seen = await c.engine.call<{ requests: number } | null>('stats');
  const answered = await c.loadgen.call<Record<string, number>>('parkedStatuses');
  await c.loadgen.call('unpark');
  const released = await until(async () => {
    const o = await occ();
    return o.inflight === 0 && o.queued === 0;
  }, 10_000);
  const m0 = memory[0]!;
  const mPrev = memory.at(-2)!;
  const mN = memory.at(-1)!;
  const last = PARK.steps.at(-1)!;
  const per = (a: MemoryReading, b: MemoryReading, k: keyof MemoryReading, n: number) =>
    Math.round((b[k] - a[k]) / n);
  const rss = per(m0, mN, 'rss', parked);
  const heap = per(m0, mN, 'heapUsed', parked);
  const ext = per(m0, mN, 'external', parked);
  return {
    parked,
    memory,
    rss_bytes_per_request: rss,
    heap_bytes_per_request: heap,
    external_bytes_per_request: ext,
    rss_marginal_bytes_per_request: per(mPrev, mN, 'rss', last),
    heap_marginal_bytes_per_request: per(mPrev, mN, 'heapUsed', last),
    bytes_per_parked_request: Math.max(rss, heap + ext),
    engine_requests_seen: seen?.requests ?? null,
    answered_while_parked: answered,
    released_to_zero: released,
  };
}
