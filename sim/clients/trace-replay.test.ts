import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { tokenHistograms } from './trace-empirical.js';
import type { TraceRecord } from './trace-parse.js';
import { scaleTrace, spreadQuantised } from './trace-replay.js';

const rec = (atMs: number, line: number): TraceRecord => ({
  atMs,
  promptTokens: 10 * line,
  outputTokens: line,
  line,
});

async function collect(records: AsyncIterable<TraceRecord>): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

describe('scaling a trace', () => {
  it('compresses time by the speed-up and shifts it to startMs', async () => {
    const out = await collect(
      scaleTrace([rec(0, 1), rec(3000, 2), rec(9000, 3)], { speedup: 3, startMs: 50 }),
    );
    expect(out.map((r) => r.atMs)).toEqual([50, 1050, 3050]);
    expect(out[1]).toEqual({ atMs: 1050, promptTokens: 20, outputTokens: 2, line: 2 });
  });

  it('rejects a speed-up of 0', async () => {
    await expect(collect(scaleTrace([rec(0, 1)], { speedup: 0 }))).rejects.toThrow(
      'trace.speedup: 0 is not a positive number',
    );
  });
});

describe('spreading quantised timestamps', () => {
  it('spreads each group over its bucket, keeping file order and time order, deterministically', async () => {
    const input = [rec(0, 1), rec(0, 2), rec(0, 3), rec(3000, 4), rec(6000, 5), rec(6000, 6)];
    const out = await collect(spreadQuantised(input, 3000, seedrandom('x')));
    expect(out.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6]);
    const times = out.map((r) => r.atMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(times.slice(0, 3).every((t) => t >= 0 && t < 3000)).toBe(true);
    expect(times[3]).toBeGreaterThanOrEqual(3000);
    expect(times.slice(4).every((t) => t >= 6000 && t < 9000)).toBe(true);
    const again = await collect(spreadQuantised(input, 3000, seedrandom('x')));
    expect(again).toEqual(out);
  });
});

describe('token histograms', () => {
  it('count each distinct token value', async () => {
    const records = [rec(0, 1), rec(1, 2), rec(2, 1)];
    expect(await tokenHistograms(records)).toEqual({
      prompt: { kind: 'empirical', values: [10, 20], weights: [2, 1] },
      output: { kind: 'empirical', values: [1, 2], weights: [2, 1] },
      count: 3,
    });
  });
});
