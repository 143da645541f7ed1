import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_PROFILES } from './profiles.js';
import {
  coldStartMultiplier,
  decodeBatch,
  fittedStepTime,
  prefillBatch,
  rooflineStepTime,
} from './step-time.js';
import { runToIdle, unitStepEngine } from './test/helpers.js';

const h100x8b = rooflineStepTime(DEPLOYMENT_PROFILES['llama-3.1-8b-h100'].roofline);
const a100x8b = rooflineStepTime(DEPLOYMENT_PROFILES['llama-3.1-8b-a100-80g'].roofline);
const h100x70b = rooflineStepTime(DEPLOYMENT_PROFILES['llama-3.1-70b-tp4-h100'].roofline);

describe('roofline step time against the anchors (sim-anchors.md §5)', () => {
  it('computes the formula exactly for 8B H100, one decode with 512 tokens of context', () => {
    const memMs = ((16.1e9 + 131072 * 512) / (3.35e12 * 0.8)) * 1000;
    expect(h100x8b(decodeBatch(1, 512))).toBeCloseTo(0.6 + 0.005 + memMs, 12);
  });

  it('8B H100 batch-1 decode ≈ 6.6 ms, within 3% of the measured 6.48 ms TPOT (InferenceBench, vLLM 0.21)', () => {
    const ms = h100x8b(decodeBatch(1, 512));
    expect(ms).toBeCloseTo(6.6375, 3);
    expect(Math.abs(ms / 6.48 - 1)).toBeLessThan(0.03);
  });

  it('8B H100 decode is flat in the batch while the GPU bounds it, then linear once the host does', () => {
    // GPU part at batch 64: still memory-bound, ≈ 7.9 ms; host part 64 × 0.7 ms = 44.8 ms.
    expect(h100x8b(decodeBatch(4, 512)) / h100x8b(decodeBatch(1, 512))).toBeLessThan(1.02);
    expect(h100x8b(decodeBatch(64, 512))).toBeCloseTo(0.6 + 64 * 0.7, 9);
    expect(h100x8b(decodeBatch(128, 512)) - h100x8b(decodeBatch(64, 512))).toBeCloseTo(64 * 0.7, 9);
  });

  it('8B H100 GPU time grows with the KV bytes read for attention over the context', () => {
    const gpuOnly = rooflineStepTime({
      ...DEPLOYMENT_PROFILES['llama-3.1-8b-h100'].roofline,
      hostPerSeqMs: 0,
    });
    const kvMs = ((64 * 4096 * 131072) / (3.35e12 * 0.8)) * 1000;
    expect(gpuOnly(decodeBatch(64, 4096)) - gpuOnly(decodeBatch(64, 0))).toBeCloseTo(kvMs, 9);
  });

  it('8B A100 batch-64 decode on the GPU without attention is within 5% of Vidur’s profiled linear ops (11.3 ms)', () => {
    const gpuOnly = rooflineStepTime({
      ...DEPLOYMENT_PROFILES['llama-3.1-8b-a100-80g'].roofline,
      hostPerSeqMs: 0,
    });
    expect(Math.abs(gpuOnly(decodeBatch(64, 0)) / 11.3 - 1)).toBeLessThan(0.05);
  });

  it('8B A100 decode floor ≈ 10.5 ms and 70B TP4 H100 ≈ 17 ms (derived anchors, within 3%)', () => {
    expect(Math.abs(a100x8b(decodeBatch(1, 0)) / 10.5 - 1)).toBeLessThan(0.03);
    expect(Math.abs(h100x70b(decodeBatch(1, 0)) / 17 - 1)).toBeLessThan(0.03);
  });

  it('8B H100 prefill costs ≈ 36 µs per token; 70B TP4 H100 ≈ 12.6k tokens/s', () => {
    const perTokenUs = (h100x8b(prefillBatch(512)) - h100x8b(prefillBatch(256))) / 256;
    expect(perTokenUs * 1000).toBeGreaterThan(36);
    expect(perTokenUs * 1000).toBeLessThan(38);
    const tokensPerSec = 2048 / (h100x70b(prefillBatch(2048)) / 1000);
    expect(Math.abs(tokensPerSec / 12_600 - 1)).toBeLessThan(0.05);
  });

  it('a later prefill chunk costs more than the first (causal attention over the earlier chunks)', () => {
    expect(h100x8b(prefillBatch(2048, 6144))).toBeGreaterThan(h100x8b(prefillBatch(2048, 0)) * 1.05);
  });
});

describe('fitted step time', () => {
  it('is a + b·N + c·|S| + d·C', () => {
    const f = fittedStepTime({ a: 1, b: 0.01, c: 0.1, d: 0.0001 });
    expect(f(decodeBatch(10, 1000))).toBeCloseTo(1 + 0.1 + 1 + 1, 12);
  });
});

describe('cold start', () => {
  it('slows steps by the factor at (re)start, decaying linearly to 1 over the window', () => {
    const cold = { factor: 3, windowMs: 1000 };
    expect([0, 250, 500, 1000, 5000].map((t) => coldStartMultiplier(cold, t))).toEqual([3, 2.5, 2, 1, 1]);
    expect(coldStartMultiplier(undefined, 0)).toBe(1);
  });

  it('applies to engine steps from the (re)start time', () => {
    const e = unitStepEngine({}, { coldStart: { factor: 5, windowMs: 4 }, startedAtMs: 0 });
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 4 }, 0);
    const durations = runToIdle(e).map((s) => s.batch?.durationMs ?? 0);
    // At 0: ×5 -> 5 ms; at 5 and later the window is over.
    expect(durations).toEqual([5, 1, 1, 1, 0]);
    e.restart(100);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 1 }, 102);
    expect(e.step(102).batch?.durationMs).toBe(3);
  });
});
