import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CalibrationInputError, calibrate, checkPoints, parseBenchResult } from './calibrate.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';

const DIR = join(import.meta.dirname, 'fixtures', 'inferencebench-h100-8b');
const read = (c: number): unknown => JSON.parse(readFileSync(join(DIR, `c${c}.json`), 'utf8'));
const points = [1, 4, 16, 64].map((c) => parseBenchResult(read(c), `c${c}.json`));
const h100 = DEPLOYMENT_PROFILES['llama-3.1-8b-h100'];
const rel = (a: number, b: number): number => Math.abs(a / b - 1);

describe('calibrate from vllm bench serve results', () => {
  it('fits the InferenceBench fixture from a wrong start: TPOT within 15% everywhere, TTFT within 20% at c = 1, 4, 64', () => {
    const start = {
      ...h100,
      roofline: { ...h100.roofline, memEfficiency: 0.6, hostPerSeqMs: 0.05, mfu: 0.3 },
      apiOverheadMs: 10,
    };
    const cal = calibrate(start, points, 80);
    expect(cal.terms.hostPerSeqMs).toBeGreaterThan(0.5);
    expect(cal.terms.hostPerSeqMs).toBeLessThan(0.9);
    expect(cal.terms.memEfficiency).toBeGreaterThan(0.7);
    for (const r of cal.rows) expect(rel(r.fitted.tpotP50Ms, r.point.tpotP50Ms)).toBeLessThan(0.15);
    for (const r of cal.rows.filter((x) => x.point.concurrency !== 16)) {
      expect(rel(r.fitted.ttftP50Ms, r.point.ttftP50Ms)).toBeLessThan(0.2);
    }
  });

  it('takes the request lengths a result lists, dropping requests that returned nothing', () => {
    const p = parseBenchResult(
      {
        max_concurrency: 2,
        request_rate: 'inf',
        completed: 2,
        median_ttft_ms: 10,
        median_tpot_ms: 5,
        output_throughput: 100,
        input_lens: [10, 20, 30],
        output_lens: [5, 0, 7],
      },
      'x.json',
    );
    expect([p.promptTokens, p.outputTokens, p.requests]).toEqual([[10, 30], [5, 7], 2]);
  });

  it('refuses input it cannot fit, with a clear message', () => {
    const bad = (json: unknown): string => {
      try {
        parseBenchResult(json, 'x.json');
      } catch (e) {
        expect(e).toBeInstanceOf(CalibrationInputError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad([1, 2])).toMatch(/x\.json: not a vllm bench serve result/);
    expect(bad({ ...(read(4) as object), median_tpot_ms: undefined })).toMatch(
      /field median_tpot_ms missing/,
    );
    expect(bad({ ...(read(4) as object), max_concurrency: undefined })).toMatch(/only closed-loop runs/);
    expect(bad({ ...(read(4) as object), request_rate: 8 })).toMatch(/open-loop runs are not supported/);
    expect(() => checkPoints(points.slice(0, 1))).toThrow(/at least 2 results/);
    const p4 = points[1];
    if (p4 === undefined) throw new Error('fixture');
    expect(() => checkPoints([p4, { ...p4, label: 'y.json', tpotP50Ms: 20 }, ...points.slice(2)])).toThrow(
      /y\.json and c4\.json contradict each other|c4\.json and y\.json contradict each other/,
    );
    expect(() => checkPoints([p4, { ...p4, label: 'z.json', concurrency: 64, tpotP50Ms: 2 }])).toThrow(
      /contradict each other/,
    );
  });
});
