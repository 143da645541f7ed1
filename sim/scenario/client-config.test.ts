import { describe, expect, it } from 'vitest';
import { createArrivalProcess } from '../clients/arrivals.js';
import { ClosedLoopUsers } from '../clients/closed-loop.js';
import { RequestFactory } from '../clients/request-factory.js';
import { toClientConfig } from './client-config.js';
import { parseScenarioText } from './load.js';

const FULL = `name: full
duration_s: 100
gate:
  rule:
    serviceArguments: {externalIP: 192.0.2.10, port: 8080, mode: 4, sse_mode: true, api_key_auth: required}
engines:
  - {profile: llama-3.1-8b-h100, count: 1, role: prefill}
  - {profile: llama-3.1-8b-h100, count: 1, role: decode}
clients:
  prompt_tokens: {kind: lognormal, median: 1000, p95: 4000, max: 16000}
  output_tokens: {kind: uniform, low: 10, high: 500}
  stream_share: 0.8
  h2_share: 0.25
  pd_share: 0.5
  non_inference_share: 0.01
  deadline_ms: 30000
  ttft_slo_ms: 2000
  tenants:
    - id: big
      api_key: sk-big
      weight: 3
      arrival: {kind: spike, base_rate_per_sec: 5, spike_at_ms: 20000, spike_count: 50, start_ms: 1000}
      output_tokens: {kind: fixed, value: 64}
    - id: small
      arrival: {kind: step, steps: [{duration_ms: 10000, rate_per_sec: 1}, {duration_ms: 5000, rate_per_sec: 4}]}
      prompt_tokens: {kind: empirical, values: [100, 200], weights: [3, 1]}
      deadline_ms: 5000
    - id: diurnal
      arrival: {kind: diurnal, mean_rate_per_sec: 2, amplitude_per_sec: 1, period_ms: 60000, phase_ms: 5}
      prompt_tokens: {kind: lognormal, mu: 6, sigma: 0.5, min: 10}
    - id: ramp
      arrival: {kind: ramp, from_rate_per_sec: 0, to_rate_per_sec: 3, max_arrivals: 100}
      output_tokens: {kind: exponential, mean: 100}
  retry: {kind: sdk, max_retries: 3, initial_delay_ms: 250, max_delay_ms: 4000, max_retry_after_sec: 30}
  closed_loop:
    users: 4
    think_time_ms: {kind: exponential, mean: 2000}
    ramp_up_ms: 1000
    requests_per_user: 10
  trace: {file: azure-llm-2023-conv.csv, speedup: 20, limit: 500, spread_quantised_ms: 3000}
timeline:
  - at_s: 50.5
    event: workload_shift
    tenant: small
    arrival: {kind: constant, rate_per_sec: 2}
    prompt_tokens: {kind: fixed, value: 8000}
  - {at_s: 60, event: workload_shift, output_tokens: {kind: fixed, value: 16}}
`;

describe('toClientConfig', () => {
  it('maps a full example to the client config types exactly', () => {
    const s = parseScenarioText(FULL, 'scenarios/full.yaml');
    const setup = toClientConfig(s);
    expect(setup).toStrictEqual({
      workload: {
        tenants: [
          {
            id: 'big',
            weight: 3,
            arrival: {
              kind: 'spike',
              baseRatePerSec: 5,
              durationMs: 99_000,
              spikeAtMs: 20_000,
              spikeCount: 50,
              startMs: 1000,
            },
            outputTokens: { kind: 'fixed', value: 64 },
          },
          {
            id: 'small',
            arrival: {
              kind: 'step',
              steps: [
                { durationMs: 10_000, ratePerSec: 1 },
                { durationMs: 5000, ratePerSec: 4 },
              ],
            },
            promptTokens: { kind: 'empirical', values: [100, 200], weights: [3, 1] },
            deadlineMs: 5000,
          },
          {
            id: 'diurnal',
            arrival: {
              kind: 'diurnal',
              meanRatePerSec: 2,
              amplitudePerSec: 1,
              periodMs: 60_000,
              phaseMs: 5,
              durationMs: 100_000,
            },
            promptTokens: { kind: 'lognormal', mu: 6, sigma: 0.5, min: 10 },
          },
          {
            id: 'ramp',
            arrival: {
              kind: 'ramp',
              fromRatePerSec: 0,
              toRatePerSec: 3,
              durationMs: 100_000,
              maxArrivals: 100,
            },
            outputTokens: { kind: 'exponential', mean: 100 },
          },
        ],
        promptTokens: { kind: 'lognormal', median: 1000, p95: 4000, max: 16_000 },
        outputTokens: { kind: 'uniform', low: 10, high: 500 },
        streamShare: 0.8,
        h2Share: 0.25,
        pdShare: 0.5,
        nonInferenceShare: 0.01,
        deadlineMs: 30_000,
        ttftSloMs: 2000,
      },
      retry: { kind: 'sdk', maxRetries: 3, initialDelayMs: 250, maxDelayMs: 4000, maxRetryAfterSec: 30 },
      apiKeys: { big: 'sk-big' },
      shifts: [
        {
          atMs: 50_500,
          tenant: 'small',
          arrival: { kind: 'constant', ratePerSec: 2, durationMs: 49_500, startMs: 50_500 },
          promptTokens: { kind: 'fixed', value: 8000 },
        },
        { atMs: 60_000, outputTokens: { kind: 'fixed', value: 16 } },
      ],
      closedLoop: {
        users: 4,
        thinkTimeMs: { kind: 'exponential', mean: 2000 },
        rampUpMs: 1000,
        stopAtMs: 100_000,
        requestsPerUser: 10,
      },
      trace: {
        path: s.clients.trace?.file,
        format: 'azure',
        speedup: 20,
        startMs: 0,
        limit: 500,
        spreadQuantisedMs: 3000,
      },
    });
    expect(setup.trace?.path).toMatch(/\/data\/azure-llm-2023-conv\.csv$/);
  });

  it('gives configs the client models accept', () => {
    const setup = toClientConfig(parseScenarioText(FULL, 'scenarios/full.yaml'));
    const rng = () => 0.5;
    const factory = new RequestFactory(setup.workload, () => rng);
    expect(factory.tenants.map((t) => t.label)).toEqual(['big', 'small', 'diurnal', 'ramp']);
    for (const t of setup.workload.tenants ?? []) {
      if (t.arrival !== undefined) expect(createArrivalProcess(t.arrival, rng).next()).toBeTypeOf('number');
    }
    const users = new ClosedLoopUsers(
      setup.closedLoop ?? { users: 0, thinkTimeMs: { kind: 'fixed', value: 0 } },
      rng,
    );
    expect(users.start()).toHaveLength(4);
  });

  it('runs an arrival without duration_ms to the end of the run', () => {
    const s = parseScenarioText(
      `name: d
duration_s: 30
gate: {smg: {max_concurrent_requests: 8}}
engines: [{profile: exponential, mean_service_ms: 100}]
clients: {arrival: {kind: poisson, rate_per_sec: 3, start_ms: 5000}}
`,
      'd.yaml',
    );
    expect(toClientConfig(s).workload.arrival).toStrictEqual({
      kind: 'poisson',
      ratePerSec: 3,
      durationMs: 25_000,
      startMs: 5000,
    });
  });
});
