/**
 * `clientTtft`: a non-streamed request's TTFT is the time to its whole answer, as its client
 * sees it, for its record and its TTFT SLO; streamed requests keep the engine's first token.
 */
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from '../scenario/load.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const SCENARIO = `
name: client-ttft
seed: 3
duration_s: 30
gate:
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: enforce, fc_max_outstanding: 64 }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  arrival: { kind: poisson, rate_per_sec: 4 }
  prompt_tokens: { kind: fixed, value: 512 }
  output_tokens: { kind: fixed, value: 200 }
  stream_share: 0.5
  ttft_slo_ms: 1000
`;

describe('clientTtft', () => {
  it("times a non-streamed request's TTFT and SLO to its whole answer, and leaves streamed ones alone", async () => {
    const scenario = parseScenarioText(SCENARIO, 'client-ttft.yaml');
    const engine = new MemorySink();
    const client = new MemorySink();
    await runScenario(scenario, { sink: engine });
    await runScenario(scenario, { sink: client, clientTtft: true });
    const done = (s: MemorySink, stream: boolean) =>
      s.requests.filter((r) => r.outcome === 'completed' && r.stream === stream);
    expect(done(client, false).length).toBeGreaterThan(20);
    for (const r of done(client, false)) expect(r.ttft_ms).toBe(r.e2e_ms);
    // 200 output tokens take more than the 1 s SLO: seen whole, no non-streamed answer is good.
    expect(done(client, false).every((r) => !r.good)).toBe(true);
    expect(
      done(engine, false).every((r) => typeof r.ttft_ms === 'number' && r.ttft_ms < (r.e2e_ms as number)),
    ).toBe(true);
    expect(done(engine, false).some((r) => r.good)).toBe(true);
    expect(done(client, true)).toEqual(done(engine, true));
  });
});
