/**
 * Memory per live request in the simulator (`npm run bench:sim-memory`).
 *
 * The standard benchmark's pool (64 engines, the gate enforcing) run for 120 simulated
 * seconds at several arrival rates, with long outputs so that thousands of requests are in
 * the system at once; per-request records are streamed to files as in every run. At 100 s
 * each run pauses (between two chunks of simulated time), collects garbage and reads the
 * heap (V8 heap used + external buffers) and the number of live requests (attempts decided
 * and not yet recorded). The slope of a least-squares line through (live, heap) over the
 * runs is the memory each live request costs; the intercept is the run's fixed state.
 *
 * `--json` prints one object with `bytes_per_live_request`, the intercept and the points.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScenario } from '../sim/run/run.js';
import { FileSink } from '../sim/run/sinks.js';
import { parseScenarioText } from '../sim/scenario/load.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  // Re-run with the collector exposed (the measurement needs a full collection).
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(r.status ?? 1);
}

const RATES = [100, 175, 250, 325];
const MEASURE_AT_MS = 100_000;

function scenarioText(rate: number): string {
  return `
name: sim-memory-${rate}
seed: 1
duration_s: 120
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
      fc_mode: enforce
      fc_max_outstanding: 16384
      fc_ep_max_inflight: 256
      fc_max_queue_depth: 4096
      fc_max_queue_wait_ms: 30000
engines:
  - profile: llama-3.1-8b-h100
    count: 64
    max_num_seqs: 256
clients:
  arrival: { kind: poisson, rate_per_sec: ${rate} }
  prompt_tokens: { kind: lognormal, median: 256, p95: 1024, max: 4096 }
  output_tokens: { kind: uniform, low: 1500, high: 2500 }
  stream_share: 0.9
  deadline_ms: 600000
`;
}

interface Point {
  rate: number;
  live: number;
  heap_bytes: number;
}

async function measure(rate: number): Promise<Point> {
  const scenario = parseScenarioText(scenarioText(rate), `sim-memory-${rate}.yaml`);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-mem-'));
  let decided = 0;
  let recorded = 0;
  let point: Point | null = null;
  const files = new FileSink(
    dir,
    scenario.endpoints.map((e) => e.id),
  );
  let simNowMs = 0;
  const sink = {
    request: (r: Parameters<FileSink['request']>[0]) => {
      recorded++;
      files.request(r);
    },
    second: (row: Parameters<FileSink['second']>[0]) => {
      simNowMs = row.t_s * 1000;
      files.second(row);
    },
    flush: async () => {
      await files.flush();
      if (point === null && simNowMs >= MEASURE_AT_MS) {
        gc!();
        gc!();
        const m = process.memoryUsage();
        point = { rate, live: decided - recorded, heap_bytes: m.heapUsed + m.external };
      }
    },
    close: (s: Parameters<FileSink['close']>[0]) => files.close(s),
  };
  try {
    await runScenario(scenario, {
      sink,
      observer: {
        decided: () => {
          decided++;
        },
      },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (point === null) throw new Error('the run ended before the measuring point');
  return point;
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const points: Point[] = [];
  // A first run warms up the code (compiled code and caches count in the intercept otherwise).
  await measure(RATES[0] as number);
  for (const rate of RATES) points.push(await measure(rate));
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.live, 0) / n;
  const my = points.reduce((s, p) => s + p.heap_bytes, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.live - mx) * (p.heap_bytes - my), 0);
  const sxx = points.reduce((s, p) => s + (p.live - mx) ** 2, 0);
  const slope = sxy / sxx;
  const out = {
    bytes_per_live_request: Math.round(slope),
    fixed_heap_mib: Math.round(((my - slope * mx) / 2 ** 20) * 10) / 10,
    points,
  };
  if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else {
    process.stdout.write(`simulator memory per live request (node ${process.version})\n`);
    for (const p of points) {
      process.stdout.write(
        `  ${p.rate} req/s: ${p.live} live requests, heap + external ${(p.heap_bytes / 2 ** 20).toFixed(1)} MiB\n`,
      );
    }
    process.stdout.write(
      `  slope: ${out.bytes_per_live_request} bytes per live request (fixed part ${out.fixed_heap_mib} MiB)\n`,
    );
  }
}

await main();
