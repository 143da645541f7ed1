import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { tokenHistograms } from './trace-empirical.js';
import type { TraceRecord } from './trace-parse.js';
import { spreadQuantised } from './trace-replay.js';

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
