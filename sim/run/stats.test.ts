import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import type { RequestRecord } from './records.js';
import { RunStats, select, summarize } from './stats.js';

function completed(o: Partial<RequestRecord>): RequestRecord {
  return {
    id: 1,
    logical_id: 1,
    attempt: 1,
    tenant: '',
    sent_ms: 2_000,
    protocol: 'http1',
    stream: true,
    pd: false,
    inference: true,
    prompt_tokens: 100,
    output_tokens: 0,
    decision: 'admit',
    outcome: 'completed',
    status: 200,
    error: '',
    endpoint: 'e',
    queue_wait_ms: '',
    ttft_ms: 50,
    e2e_ms: 1_050,
    good: true,
    generated_tokens: 0,
    wasted_tokens: 0,
    ...o,
  } as RequestRecord;
}

describe("the summary in the engine user's terms", () => {
  it('gives TPOT as (e2e - TTFT) / (tokens - 1) of completed requests with two or more tokens, and output tokens/s', () => {
    const stats = new RunStats(1_000);
    stats.record(completed({ generated_tokens: 101 })); // (1050 - 50) / 100 = 10 ms
    stats.record(completed({ generated_tokens: 11, e2e_ms: 250 })); // (250 - 50) / 10 = 20 ms
    stats.record(completed({ generated_tokens: 1 })); // one token: no TPOT
    stats.record(completed({ generated_tokens: 500, outcome: 'cancelled' })); // not completed
    stats.record(completed({ generated_tokens: 50, sent_ms: 500 })); // in the warm-up
    const s = summarize(stats, {
      scenario: 't',
      seed: 1,
      dialect: 'loxilb',
      durationMs: 11_000,
      warmupMs: 1_000,
      decisions: {},
      ceilings: { max_outstanding: 0, queue_depth: 0, queue_wait_ms: 0 },
      anomalies: {},
      events: 0,
    });
    expect(s.tpot_ms.count).toBe(2);
    expect(s.tpot_ms.max).toBeCloseTo(20, 0);
    expect(s.tpot_ms.p50).toBeGreaterThanOrEqual(9.5);
    expect(s.tpot_ms.p50).toBeLessThanOrEqual(20.5);
    expect(s.output_tokens_per_s).toBe(11.3); // 113 tokens over the 10 measured seconds
  });
});

describe('per-second percentiles', () => {
  it('select finds the same k-th smallest as a sort, with ties, runs and any order', () => {
    const rng = rngStream(3, 'select');
    for (let round = 0; round < 300; round++) {
      const n = rng.int(1, 120);
      const spread = rng.int(1, 6) === 1 ? 3 : 1000; // some arrays are mostly ties
      const xs = Array.from({ length: n }, () => Math.round(rng.next() * spread * 1000) / 1000);
      if (round % 7 === 0) xs.sort((a, b) => a - b);
      if (round % 11 === 0) xs.sort((a, b) => b - a);
      const sorted = [...xs].sort((a, b) => a - b);
      const k = rng.int(0, n - 1);
      const copy = [...xs];
      expect(select(copy, k)).toBe(sorted[k]);
      // A second selection on the reordered array is still exact (p50 then p95 share one).
      const k2 = rng.int(0, n - 1);
      expect(select(copy, k2)).toBe(sorted[k2]);
      expect([...copy].sort((a, b) => a - b)).toEqual(sorted);
    }
  });
});
