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

/** A sink that takes gaps late and pooled (as the run's ITL histogram does): a multiset of µs. */
class PooledSink {
  readonly counts = new Map<number, number>();
  readonly sources: { settleGaps(): void }[] = [];
  watchCalls = 0;
  addUs(us: number): void {
    this.addManyUs(us, 1);
  }
  addManyUs(us: number, n: number): void {
    expect(Number.isInteger(us) && us >= 0 && Number.isInteger(n) && n >= 1).toBe(true);
    this.counts.set(us, (this.counts.get(us) ?? 0) + n);
  }
  watch(source: { settleGaps(): void }): void {
    this.watchCalls++;
    this.sources.push(source);
  }
  settled(): Map<number, number> {
    for (const s of this.sources) s.settleGaps();
    return this.counts;
  }
}

/** The multiset of `gaps` (µs). */
function tally(gaps: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const g of gaps) m.set(g, (m.get(g) ?? 0) + 1);
  return m;
}

const sorted = (m: Map<number, number>): [number, number][] => [...m.entries()].sort((a, b) => a[0] - b[0]);

describe('token gaps handed over late and pooled', () => {
  it('are the same multiset as one by one, through preemptions, skipped steps, ring growth and settles mid-run', () => {
    const e = new VllmEngine({
      modelName: 'm',
      limits: smallLimits({ numGpuBlocks: 40, maxNumBatchedTokens: 24, maxNumSeqs: 6, blockSize: 4 }),
      stepTime: (s) => 1 + 0.013 * s.numTokens + 0.0007 * s.contextTokens,
    });
    const pooled = new PooledSink();
    const eager: number[] = [];
    const progress = new Map<string, RequestProgress>();
    let seed = 11;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 1 + (seed % n);
    };
    let next = 0;
    let sent = 0;
    let finished = 0;
    let preemptions = 0;
    let midSettles = 0;
    for (let steps = 0; steps < 40_000; steps++) {
      const at = e.nextStepAt();
      if (sent < 600 && (at === null || next <= at)) {
        // Some long requests keep old steps needed while others come and go (the ring grows).
        const out = sent % 97 === 0 ? 400 : rand(60);
        const r: EngineRequest = { id: `r${sent}`, promptTokens: rand(40), outputTokens: out };
        if (e.submit(r, next).accepted) progress.set(r.id, e.progress(r.id)!);
        sent++;
        next += rand(6);
        continue;
      }
      if (at === null) break;
      const out = e.step(at);
      preemptions += out.preempted.length;
      for (const f of out.finished) {
        const p = progress.get(f.request.id)!;
        // Every other request only: the pool must hold exactly the gaps of those handed over.
        if (finished++ % 2 === 1) continue;
        const firstEager = p.tokenGaps!({ addUs: (g) => eager.push(g) });
        const firstPooled = p.tokenGaps!(pooled);
        expect(firstPooled).toBe(firstEager);
      }
      // Reading the pool mid-run must not lose what is handed over after.
      if (steps % 500 === 0) {
        pooled.settled();
        midSettles++;
      }
    }
    expect(finished).toBeGreaterThan(500);
    expect(preemptions).toBeGreaterThan(0);
    expect(midSettles).toBeGreaterThan(5);
    expect(pooled.watchCalls).toBe(1);
    expect(eager.length).toBeGreaterThan(5_000);
    expect(sorted(pooled.settled())).toEqual(sorted(tally(eager)));
  });

  it('by hand: two requests over the same steps are one pooled count per step', () => {
    const e = new VllmEngine({ modelName: 'm', limits: smallLimits(), stepTime });
    const pooled = new PooledSink();
    const calls: [number, number][] = [];
    const spy = {
      addUs: (us: number) => calls.push([us, 1]),
      addManyUs: (us: number, n: number) => calls.push([us, n]),
      watch: (s: { settleGaps(): void }) => pooled.watch(s),
    };
    e.submit({ id: 'a', promptTokens: 8, outputTokens: 4 }, 0);
    e.submit({ id: 'b', promptTokens: 8, outputTokens: 4 }, 0);
    const pa = e.progress('a')!;
    const pb = e.progress('b')!;
    // 0: both prefill (5 ms) → 5: first tokens; then 3 decodes of 4 ms: 9, 13, 17.
    let at: number | null = 0;
    while (at !== null) {
      e.step(at);
      at = e.nextStepAt();
    }
    expect(pa.tokenGaps!(spy)).toBe(5);
    expect(pb.tokenGaps!(spy)).toBe(5);
    expect(calls).toEqual([]);
    pooled.settled();
    expect(calls).toEqual([
      [4000, 2],
      [4000, 2],
      [4000, 2],
    ]);
  });
});
