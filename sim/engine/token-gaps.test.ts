/**
 * A request's inter-token gaps as the engine reads them from its step log when the request
 * finishes (`RequestProgress.tokenGaps`): by hand on a small schedule, and against the token
 * lists of every step (`reportTokens`) through preemptions and skipped steps.
 */
import { describe, expect, it } from 'vitest';
import { VllmEngine } from './engine.js';
import type { BatchShape } from './step-time.js';
import { smallLimits } from './test/helpers.js';
import type { EngineRequest, RequestProgress } from './types.js';

/** 5 ms for a step with prefill, else 2 ms + 1 ms per sequence. */
const stepTime = (s: BatchShape): number => (s.numPrefillTokens > 0 ? 5 : 2 + s.numSeqs);

/** The gaps a request's progress hands over, in ms. */
function gapsOf(p: RequestProgress): { first: number; gaps: number[] } {
  const us: number[] = [];
  const first = p.tokenGaps!({ addUs: (g) => us.push(g) });
  for (const g of us) expect(Number.isInteger(g) && g >= 0).toBe(true);
  return { first, gaps: us.map((g) => g / 1000) };
}

describe('token gaps from the step log', () => {
  it('are the gaps between the completions a request emitted at, by hand', () => {
    const e = new VllmEngine({ modelName: 'm', limits: smallLimits(), stepTime });
    const a = { id: 'a', promptTokens: 8, outputTokens: 4 };
    const b = { id: 'b', promptTokens: 8, outputTokens: 3 };
    const pa = e.submit(a, 0);
    expect(pa.accepted).toBe(true);
    const progressA = e.progress('a')!;
    // 0: prefill a (5 ms) → 5: a's token 1; decode a (3 ms) → 8: token 2.
    e.step(0);
    e.step(5);
    // b arrives at 8: a decodes with b's prefill (5 ms) → 13: a's token 3, b's token 1;
    // both decode (4 ms) → 17: a's token 4 (done), b's token 2; b alone (3 ms) → 20: b's 3.
    e.submit(b, 8);
    const progressB = e.progress('b')!;
    e.step(8);
    e.step(13);
    const at17 = e.step(17);
    expect(at17.finished.map((f) => f.request.id)).toEqual(['a']);
    expect(gapsOf(progressA)).toEqual({ first: 5, gaps: [3, 5, 4] });
    const at20 = e.step(20);
    expect(at20.finished.map((f) => f.request.id)).toEqual(['b']);
    expect(gapsOf(progressB)).toEqual({ first: 13, gaps: [4, 3] });
  });

  it('match the per-step token lists through preemptions, skipped steps and a long run', () => {
    // A small KV pool (preemptions) and a small token budget (running prefills crowd decodes out).
    const e = new VllmEngine({
      modelName: 'm',
      limits: smallLimits({ numGpuBlocks: 40, maxNumBatchedTokens: 24, maxNumSeqs: 6, blockSize: 4 }),
      stepTime: (s) => 1 + 0.013 * s.numTokens + 0.0007 * s.contextTokens,
      reportTokens: true,
    });
    const times = new Map<string, number[]>();
    const progress = new Map<string, RequestProgress>();
    const checked: string[] = [];
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 1 + (seed % n);
    };
    let next = 0;
    let sent = 0;
    let preemptions = 0;
    for (let steps = 0; steps < 20_000; steps++) {
      const at = e.nextStepAt();
      // New requests every few ms, 300 in all.
      if (sent < 300 && (at === null || next <= at)) {
        const r: EngineRequest = { id: `r${sent}`, promptTokens: rand(40), outputTokens: rand(60) };
        if (e.submit(r, next).accepted) progress.set(r.id, e.progress(r.id)!);
        sent++;
        next += rand(6);
        continue;
      }
      if (at === null) break;
      const out = e.step(at);
      preemptions += out.preempted.length;
      for (const r of out.tokens) {
        const l = times.get(r.id) ?? [];
        l.push(at);
        times.set(r.id, l);
      }
      for (const f of out.finished) {
        const t = times.get(f.request.id)!;
        const { first, gaps } = gapsOf(progress.get(f.request.id)!);
        expect(first).toBeCloseTo(t[0]!, 9);
        expect(gaps.length).toBe(t.length - 1);
        for (let i = 1; i < t.length; i++) expect(gaps[i - 1]).toBeCloseTo(t[i]! - t[i - 1]!, 9);
        checked.push(f.request.id);
      }
    }
    expect(checked.length).toBeGreaterThan(250);
    // The schedule must have exercised what makes gaps uneven.
    expect(preemptions).toBeGreaterThan(0);
  });
});

describe('the step log', () => {
  it('keeps only what a held request may read, and everything it may', async () => {
    const { StepLog } = await import('./step-log.js');
    let oldest = Number.POSITIVE_INFINITY;
    let next = 1;
    const log = new StepLog(() => oldest);
    // A long run with nothing held for long: the ring stays at its first size.
    for (; next <= 100_000; next++) {
      oldest = Math.max(1, next - 10);
      log.record(next * 7);
    }
    expect(log.size).toBeLessThanOrEqual(256);
    // A request that first emitted at completion 100 000 and is held for 5 000 more: all kept.
    oldest = 100_000;
    for (; next <= 105_000; next++) log.record(next * 7 + (next % 3));
    expect(log.size).toBeGreaterThanOrEqual(5_000);
    const out: number[] = [];
    log.gaps(100_000, 105_000, { addUs: (g) => out.push(g) });
    expect(out.length).toBe(5_000);
    expect(out[0]).toBe(100_001 * 7 + (100_001 % 3) - 100_000 * 7);
    expect(log.atMs(105_000)).toBe((105_000 * 7 + (105_000 % 3)) / 1000);
    // Once it has gone, the ring sheds what it held for it.
    oldest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 20_000; i++, next++) log.record(next * 7);
    expect(log.size).toBeLessThanOrEqual(8192);
  });
});
