/**
 * ITL as `vllm bench serve` defines it, on a synthetic SSE stream: the load driver's stream
 * accounting (`sse.ts`) yields vLLM's `itls` list, and the summary's percentiles of it are
 * numpy's (where nearest rank and numpy's interpolation pick the same sample) within the
 * histogram's bound (0.1 %).
 */
import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../sim/run/records.js';
import { gapsFromMs, RunStats, summarize } from '../../sim/run/stats.js';
import { CompletionStream } from './sse.js';

describe('ITL of a stream', () => {
  it("pools the gaps between SSE events as `vllm bench serve` does, the same percentiles as numpy's", () => {
    // 102 text events over socket reads at known times; some reads carry two events (a gap of
    // 0), the usage event has no choices (no token) and [DONE] ends the stream.
    const reads: { atMs: number; events: string[] }[] = [];
    let t = 100;
    let x = 11;
    for (let i = 0; i < 91; i++) {
      x = (x * 7919 + 13) % 10007;
      t += 0.2 + (x % 600) / 10; // gaps of 0.2 to 60 ms
      const events = [`{"choices":[{"index":0,"text":" w${i}"}]}`];
      if (i % 8 === 3) events.push(`{"choices":[{"index":0,"text":" v${i}"}]}`);
      reads.push({ atMs: t, events });
    }
    reads.push({ atMs: t + 1, events: ['{"choices":[],"usage":{"completion_tokens":102}}', '[DONE]'] });
    // vLLM's loop (vllm/benchmarks/lib/endpoint_request_func.py, async_request_openai_completions):
    // every message with choices is a delivery, timed when its read is handled.
    const vllmItls: number[] = [];
    let firstSeen = false;
    let recent = 0;
    for (const read of reads) {
      for (const m of read.events) {
        if (m === '[DONE]') continue;
        const data = JSON.parse(m) as { choices: unknown[] };
        if (data.choices.length === 0) continue;
        if (firstSeen) vllmItls.push(read.atMs - recent);
        firstSeen = true;
        recent = read.atMs;
      }
    }
    expect(vllmItls.length).toBe(101);
    const stream = new CompletionStream();
    for (const read of reads) stream.feed(read.events.map((e) => `data: ${e}\n\n`).join(''), read.atMs);
    expect(stream.facts.gapsMs).toEqual(vllmItls);

    const stats = new RunStats(0);
    stats.record(record({ generated_tokens: 102 }), gapsFromMs(stream.facts.gapsMs));
    const s = summarize(stats, META);
    const sorted = [...vllmItls].sort((a, b) => a - b);
    // numpy's default percentile interpolates at rank (n − 1)·q: with 101 gaps, an exact sample.
    const np = (q: number): number => sorted[Math.round(100 * q)]!;
    const itl = s.itl_ms!;
    expect(itl.count).toBe(101);
    for (const [got, q] of [
      [itl.p50, 0.5],
      [itl.p95, 0.95],
      [itl.p99, 0.99],
    ] as const) {
      // The sample numpy picks, rounded to the µs, or at most 0.1 % above it (the bucket's width).
      const exact = Math.round(np(q) * 1000) / 1000;
      expect(got).toBeGreaterThanOrEqual(exact);
      expect(got).toBeLessThanOrEqual(exact * (1 + 1 / 1024) + 0.0005);
    }
    expect(itl.max).toBe(Math.round(sorted[100]! * 1000) / 1000);
    const mean = vllmItls.reduce((a, b) => a + b, 0) / 101;
    // The mean of the gaps rounded to the µs, itself rounded to the µs.
    expect(Math.abs(itl.mean - mean)).toBeLessThanOrEqual(0.001);
    // The zero gaps of events read together are samples too.
    expect(sorted[0]).toBe(0);
  });
});

const META = {
  scenario: 's',
  seed: 1,
  dialect: 'loxilb' as const,
  durationMs: 10_000,
  warmupMs: 0,
  decisions: {},
  ceilings: { max_outstanding: 0, queue_depth: 0, queue_wait_ms: 0 },
  anomalies: {},
  events: 0,
};

function record(o: Partial<RequestRecord>): RequestRecord {
  return {
    id: 1,
    logical_id: 1,
    attempt: 1,
    tenant: 't',
    sent_ms: 0,
    protocol: 'http1',
    stream: true,
    pd: false,
    inference: true,
    prompt_tokens: 8,
    output_tokens: 102,
    decision: 'admit',
    outcome: 'completed',
    status: 200,
    error: '',
    endpoint: 'e',
    queue_wait_ms: '',
    ttft_ms: 100,
    e2e_ms: 3000,
    good: true,
    generated_tokens: 1,
    wasted_tokens: 0,
    tpot_ms: '',
    ...o,
  };
}
