/**
 * Child process: the proxy under test (`LoxiProxy`, the same code as
 * `sluice proxy`), alone in its process so its CPU and memory are its own.
 * Run with --expose-gc: `mem` collects garbage before reading the usage.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import net from 'node:net';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { LoxiProxy } from '../../proxy/proxy.js';
import { serve } from './ipc.js';

export interface GateRule {
  /** Pool ceiling (`fc_max_outstanding`). */
  ceiling: number;
  /** Queue bound (`fc_max_queue_depth`). */
  depth: number;
  /** Queue wait (`fc_max_queue_wait_ms`). */
  waitMs: number;
  enginePort: number;
}

export interface MemoryReading {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

const proxy = new LoxiProxy({
  adminHost: '127.0.0.1',
  adminPort: 0,
  env: {},
  warn: (l) => process.stderr.write(`proxy: ${l}\n`),
  monitor: { healthIntervalMs: 0, scrapeIntervalMs: 0 },
});
await proxy.start();

/** Finished exchanges by `status reason` (counted beside the proxy's own counters). */
const finished = new Map<string, number>();
const record = proxy.counters.record.bind(proxy.counters);
proxy.counters.record = (r) => {
  const k = `${r.status} ${r.reason}`;
  finished.set(k, (finished.get(k) ?? 0) + 1);
  record(r);
};

let current: { key: string; port: number } | null = null;

// Event-loop diagnostics (a 10 ms timer: negligible cost): how late the loop
// ran between two `loop` calls.
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const late = (ns: number) => Math.max(0, Math.round((ns / 1e6 - 10) * 100) / 100);

// Garbage-collection pauses (V8 'gc' performance entries) between two `loop` calls.
let gcCount = 0;
let gcTotalMs = 0;
let gcMaxMs = 0;
let gcMajorMs = 0;
let gcMinorCount = 0;
let gcMinorMaxMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++;
    gcTotalMs += e.duration;
    gcMaxMs = Math.max(gcMaxMs, e.duration);
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcMajorMs += e.duration;
    else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gcMinorCount++;
      gcMinorMaxMs = Math.max(gcMinorMaxMs, e.duration);
    }
  }
}).observe({ entryTypes: ['gc'] });

// BENCH_PROXY_HEAP_SAMPLE=FILE: sampled allocations, garbage included (V8
// sampling heap profiler), written to FILE (a .heapprofile) at every `loop`.
const heapSampleFile = process.env.BENCH_PROXY_HEAP_SAMPLE;
const inspector = heapSampleFile ? new Session() : null;
if (inspector) {
  inspector.connect();
  inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

export interface LoopStats {
  late_p50_ms: number;
  late_p99_ms: number;
  late_max_ms: number;
  /** GC pauses since the last call: count, summed and longest duration (ms). */
  gc_count: number;
  gc_total_ms: number;
  gc_max_ms: number;
  /** Of gc_total_ms, the full (mark-compact) collections. */
  gc_major_ms: number;
  /** Of gc_count, the scavenges (young generation), and the longest of them (ms). */
  gc_minor_count: number;
  gc_minor_max_ms: number;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function pool() {
  return current ? proxy.gate.pool(current.key) : undefined;
}

serve({
  /** Replaces the benchmark rule (one at a time); answers the service port. */
  async rule(r: GateRule) {
    if (current) await proxy.remove(current.key);
    const port = await freePort();
    const res = await proxy.apply({
      serviceArguments: {
        externalIP: '127.0.0.1',
        port,
        protocol: 'tcp',
        mode: 4,
        sse_mode: true,
        fc_mode: 'enforce',
        fc_adaptive: 'off',
        fc_max_outstanding: r.ceiling,
        fc_max_queue_depth: r.depth,
        fc_max_queue_wait_ms: r.waitMs,
      },
      endpoints: [{ endpointIP: '127.0.0.1', targetPort: r.enginePort, weight: 1 }],
    });
    current = { key: res.key, port };
    return port;
  },
  /** In-flight units and parked requests of the benchmark rule. */
  occupancy() {
    const p = pool();
    return { inflight: p?.inflight ?? 0, queued: p?.queue.length ?? 0 };
  },
  mem(): MemoryReading {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      gc();
      gc();
    }
    const m = process.memoryUsage();
    return {
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
    };
  },
  /** Finished exchanges by status and reason since the last call, and client faults so far. */
  finished() {
    const out = Object.fromEntries(finished);
    finished.clear();
    return { finished: out, faults: { ...proxy.counters.faults } };
  },
  /** Event-loop lateness (ms) since the last call. */
  loop(): LoopStats {
    const out = {
      // the histogram holds timer intervals: lateness = interval - resolution
      late_p50_ms: late(delay.percentile(50)),
      late_p99_ms: late(delay.percentile(99)),
      late_max_ms: late(delay.max),
      gc_count: gcCount,
      gc_total_ms: Math.round(gcTotalMs * 100) / 100,
      gc_max_ms: Math.round(gcMaxMs * 100) / 100,
      gc_major_ms: Math.round(gcMajorMs * 100) / 100,
      gc_minor_count: gcMinorCount,
      gc_minor_max_ms: Math.round(gcMinorMaxMs * 100) / 100,
    };
    delay.reset();
    gcCount = 0;
    gcTotalMs = 0;
    gcMaxMs = 0;
    gcMajorMs = 0;
    gcMinorCount = 0;
    gcMinorMaxMs = 0;
    if (inspector && heapSampleFile)
      inspector.post('HeapProfiler.getSamplingProfile', (err, r) => {
        if (!err) writeFileSync(heapSampleFile, JSON.stringify(r.profile));
      });
    return out;
  },
  metrics() {
    return proxy.metricsText();
  },
  async stop() {
    await proxy.close();
    return true;
  },
});
