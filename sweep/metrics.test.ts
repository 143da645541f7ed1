import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../sim/run/records.js';
import { figuresOf, METRIC_NAMES } from './metrics.js';

const docs = readFileSync(new URL('../docs/sizing.md', import.meta.url), 'utf8');

describe('the metric names of --slo and --tolerance', () => {
  it('are all documented in docs/sizing.md', () => {
    for (const name of METRIC_NAMES) expect(docs, name).toContain(`\`${name}\``);
  });

  it('read a summary, with no latency percentile when nothing produced a token', () => {
    const none = { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };
    const s = {
      goodput_rps: 1.5,
      goodput_share: 0.25,
      throughput_rps: 2,
      shed_rate: 0.5,
      ttft_ms: none,
      e2e_ms: { ...none, count: 3, p50: 10, p95: 20, p99: 30 },
      queue_wait_ms: none,
      jain_fairness: 1,
      retry_amplification: 1.25,
      wasted_tokens: 7,
      max_inflight: 4,
      max_queued: 2,
    } as unknown as RunSummary;
    expect(figuresOf(s)).toEqual({
      goodput_rps: 1.5,
      goodput_share: 0.25,
      throughput_rps: 2,
      shed_rate: 0.5,
      ttft_p50_ms: null,
      ttft_p95_ms: null,
      ttft_p99_ms: null,
      e2e_p50_ms: 10,
      e2e_p95_ms: 20,
      e2e_p99_ms: 30,
      queue_wait_p95_ms: 0,
      jain_fairness: 1,
      retry_amplification: 1.25,
      wasted_tokens: 7,
      max_inflight: 4,
      max_queued: 2,
    });
  });
});
