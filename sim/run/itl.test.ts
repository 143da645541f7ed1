/**
 * Inter-token latency (ITL) and per-request TPOT in a run's outputs: by hand on a run whose
 * step times are known, the gaps' sums and counts against every request's record over library
 * scenarios, and byte-identical reruns. (The definition of `vllm bench serve` on a synthetic
 * SSE stream is checked in `loadgen/shared/itl.test.ts`.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario, parseScenarioText } from '../scenario/load.js';
import { runScenario } from './run.js';
import { FileSink, MemorySink } from './sinks.js';

/**
 * One engine whose steps take 2 ms + 0.25 ms per new token + 1 ms per sequence: a lone request
 * with an 8-token prompt prefills in 5 ms, then decodes a token every 3.25 ms.
 */
const handScenario = (streamShare: number): string => `
name: itl-by-hand
seed: 1
duration_s: 10
gate:
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: enforce, fc_max_outstanding: 8 }
engines:
  - profile: fitted
    count: 1
    fitted: { a: 2, b: 0.25, c: 1, d: 0 }
clients:
  arrival: { kind: constant, rate_per_sec: 1 }
  prompt_tokens: { kind: fixed, value: 8 }
  output_tokens: { kind: fixed, value: 5 }
  stream_share: ${streamShare}
`;

describe('ITL and TPOT', () => {
  it('are the step times of a lone request, by hand', async () => {
    const sink = new MemorySink();
    const s = await runScenario(parseScenarioText(handScenario(1), 'itl.yaml'), { sink });
    expect(s.completed).toBeGreaterThanOrEqual(9);
    for (const r of sink.requests) {
      expect(r).toMatchObject({ outcome: 'completed', ttft_ms: 5, e2e_ms: 18, tpot_ms: 3.25 });
    }
    // Four gaps per five-token stream, every one 3.25 ms.
    expect(s.itl_ms).toEqual({
      count: 4 * s.completed,
      p50: 3.25,
      p95: 3.25,
      p99: 3.25,
      max: 3.25,
      mean: 3.25,
    });
    expect(s.tpot_ms).toMatchObject({ count: s.completed, p50: 3.25, max: 3.25 });
    expect(s.request_throughput_per_s).toBe(s.throughput_rps);
    expect(s.output_tokens_per_s).toBe(Math.round(((5 * s.completed) / 10) * 1000) / 1000);
  });

  it('counts no gaps for a non-streamed request (its client sees one delivery), TPOT still', async () => {
    const sink = new MemorySink();
    const s = await runScenario(parseScenarioText(handScenario(0), 'itl.yaml'), { sink });
    expect(s.completed).toBeGreaterThanOrEqual(9);
    expect(s.itl_ms).toEqual({ count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 });
    expect(sink.requests.every((r) => r.tpot_ms === 3.25)).toBe(true);
  });

  it.each(['default.yaml', 'pd-pool.yaml', 'long-context-shift.yaml', 'cancellations.yaml'])(
    '%s: the gaps of each completed stream sum to e2e − TTFT, one fewer than its tokens',
    async (file) => {
      const scenario = await loadScenario(join(REPO_ROOT, 'scenarios', file));
      const sink = new MemorySink();
      const s = await runScenario(scenario, { sink });
      const counted = sink.requests.filter(
        (r) => r.outcome === 'completed' && r.stream && r.inference && r.sent_ms >= scenario.warmup_s * 1000,
      );
      expect(counted.length).toBeGreaterThan(50);
      const gaps = counted.reduce((n, r) => n + Math.max(0, r.generated_tokens - 1), 0);
      const span = counted.reduce((n, r) => n + ((r.e2e_ms as number) - (r.ttft_ms as number)), 0);
      const itl = s.itl_ms!;
      expect(itl.count).toBe(gaps);
      // The mean is rounded to the µs.
      expect(Math.abs(itl.mean * itl.count - span)).toBeLessThanOrEqual(0.0005 * itl.count + 1e-6);
      expect(itl.p50).toBeLessThanOrEqual(itl.p95);
      expect(itl.p95).toBeLessThanOrEqual(itl.p99);
      expect(itl.p99).toBeLessThanOrEqual(itl.max);
      // No request's average gap exceeds the largest gap.
      for (const r of counted) if (r.tpot_ms !== '') expect(r.tpot_ms).toBeLessThanOrEqual(itl.max + 0.001);
    },
  );

  it('writes the same summary.json and requests.csv byte for byte from the same seed', async () => {
    const scenario = await loadScenario(join(REPO_ROOT, 'scenarios', 'pd-pool.yaml'));
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'sluice-itl-')));
    try {
      for (const dir of dirs) {
        await runScenario(scenario, {
          sink: new FileSink(
            dir,
            scenario.endpoints.map((e) => e.id),
          ),
        });
      }
      for (const f of ['summary.json', 'requests.csv']) {
        const [a, b] = dirs.map((d) => readFileSync(join(d, f), 'utf8'));
        expect(a).toBe(b);
      }
      const summary = JSON.parse(readFileSync(join(dirs[0]!, 'summary.json'), 'utf8'));
      expect(summary.itl_ms.count).toBeGreaterThan(0);
      const header = readFileSync(join(dirs[0]!, 'requests.csv'), 'utf8').split('\n')[0]!;
      expect(header.endsWith(',wasted_tokens,tpot_ms')).toBe(true);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
