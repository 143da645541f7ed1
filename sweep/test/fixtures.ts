/**
 * Small scenarios for the sweep and check tests: seconds of simulated time,
 * so a run takes milliseconds.
 */
import { parseScenarioText } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/resolve.js';

/** A loxilb gate in front of one 8-slot exponential engine, 30 s at 8 req/s. */
export const TINY_LOXILB = `
name: tiny
description: one exponential engine behind the gate, 30 s
seed: 7
duration_s: 30
warmup_s: 5
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
      fc_mode: enforce
      fc_max_outstanding: 8
      fc_max_queue_depth: 8
      fc_max_queue_wait_ms: 2000
engines:
  - profile: exponential
    count: 1
    max_num_seqs: 8
    mean_service_ms: 1000
clients:
  arrival: { kind: poisson, rate_per_sec: 8 }
  stream_share: 0
  ttft_slo_ms: 1500
  retry: { kind: none }
`;

/** The same traffic through SMG's admission control. */
export const TINY_SMG = `
name: tiny-smg
description: one exponential engine behind SMG admission, 30 s
seed: 7
duration_s: 30
warmup_s: 5
gate:
  smg:
    max_concurrent_requests: 8
    queue_size: 8
    queue_timeout_secs: 2
engines:
  - profile: exponential
    count: 1
    max_num_seqs: 8
    mean_service_ms: 1000
clients:
  arrival: { kind: poisson, rate_per_sec: 8 }
  stream_share: 0
  ttft_slo_ms: 1500
  retry: { kind: none }
`;

/** The tiny loxilb scenario. */
export function tinyLoxilb(): Scenario {
  return parseScenarioText(TINY_LOXILB, 'tiny.yaml');
}

/** The tiny SMG scenario. */
export function tinySmg(): Scenario {
  return parseScenarioText(TINY_SMG, 'tiny-smg.yaml');
}
