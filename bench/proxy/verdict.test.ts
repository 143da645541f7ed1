import { describe, expect, it } from 'vitest';
import {
  judgeAddedP99,
  judgeCpuPerRequest,
  judgeParked,
  judgeRpsRatio,
  medianOf,
  type RelaySamples,
  spreadOf,
  verdictText,
} from './verdict.js';

const calm = [0.4, 0.5, 0.45];

describe('added TTFT p99', () => {
  it('is met when the overhead is resolved and within 2 ms', () => {
    const j = judgeAddedP99(
      { ttftP99: [101, 101.5, 101.2], harnessCores: calm },
      { ttftP99: [102, 102.4, 102.1], harnessCores: calm },
    );
    expect(j).toMatchObject({ verdict: 'met', value: 0.9, why: [] });
  });

  it('is missed when resolved and above 2 ms', () => {
    const j = judgeAddedP99(
      { ttftP99: [101, 101.5, 101.2], harnessCores: calm },
      { ttftP99: [105, 105.5, 105.1], harnessCores: calm },
    );
    expect(j.verdict).toBe('missed');
    expect(verdictText(j)).toBe('MISSED');
  });

  it('is unresolved, never met, on a negative overhead (-142 ms with the harness saturated)', () => {
    const j = judgeAddedP99(
      { ttftP99: [380, 390, 385], harnessCores: [0.97, 0.99, 0.98] },
      { ttftP99: [240, 245, 243], harnessCores: [0.98, 0.99, 0.97] },
    );
    expect(j.verdict).toBe('unresolved');
    expect(j.value).toBe(-142);
    expect(j.why).toEqual([
      'negative overhead (-142 ms): a proxy cannot be faster than no proxy, so the difference is noise',
      "the direct baseline's p99 moves by 10 ms between repetitions, more than the 2 ms target",
      'the harness was saturated (engine + load generator used 0.99 cores of their one CPU, from 0.9 it is saturated): latency measured the harness',
    ]);
    expect(verdictText(j)).toMatch(/^unresolved \(negative overhead/);
  });

  it('is unresolved when the direct baseline spreads by more than the target', () => {
    const j = judgeAddedP99(
      { ttftP99: [101, 104.5, 102], harnessCores: calm },
      { ttftP99: [103, 103.2, 103.1], harnessCores: calm },
    );
    expect(j.verdict).toBe('unresolved');
    expect(j.why).toEqual([
      "the direct baseline's p99 moves by 3.5 ms between repetitions, more than the 2 ms target",
    ]);
  });
});

const relay = (cpuUs: number[], cores: number[], rps: number[]): RelaySamples => ({
  cpuUsPerReq: cpuUs,
  sutCores: cores,
  rps,
});

describe('added TTFT p99 on a busy machine', () => {
  it('is unresolved when other workloads used half a core or more during a repetition', () => {
    const j = judgeAddedP99(
      { ttftP99: [101, 101.5, 101.2], harnessCores: calm, foreignCores: [0.1, 0.2, 0.1] },
      { ttftP99: [102, 102.4, 102.1], harnessCores: calm, foreignCores: [0.1, 0.94, 0.2] },
    );
    expect(j.verdict).toBe('unresolved');
    expect(j.why).toEqual([
      'other workloads on the machine used up to 0.94 cores during a repetition (from 0.5 the machine is too busy): latency measured the contention',
    ]);
  });
});

describe('requests/s against HAProxy', () => {
  it('is unresolved when the proxy is not the bottleneck (engine-bound: met whatever the proxy costs)', () => {
    const j = judgeRpsRatio(
      relay([90, 92, 91], [0.45, 0.46, 0.44], [5000, 5100, 5050]),
      relay([30, 31, 30], [0.15, 0.15, 0.16], [5100, 5150, 5120]),
    );
    expect(j.verdict).toBe('unresolved');
    expect(j.value).toBe(0.99);
    expect(j.why).toHaveLength(2);
    expect(j.why[0]).toBe(
      'the proxy used 0.45 cores of its CPU (below 0.8): it is not the bottleneck, so requests/s is bound by the engine or the generator',
    );
  });

  it('is judged when both relays are the bottleneck', () => {
    const j = judgeRpsRatio(relay([90], [0.98], [11000]), relay([30], [0.97], [30000]));
    expect(j).toMatchObject({ verdict: 'missed', value: 0.37 });
  });

  it('is unresolved without HAProxy', () => {
    expect(judgeRpsRatio(relay([1], [1], [1]), null).why).toEqual(['HAProxy is not installed']);
  });
});

describe('CPU per request against HAProxy', () => {
  it('is met within 2 x HAProxy, and reports the ratio', () => {
    const j = judgeCpuPerRequest(relay([50, 52, 51], [0.4], [1]), relay([30, 31, 30], [0.2], [1]));
    expect(j).toMatchObject({ verdict: 'met', value: 1.7 });
  });

  it('is missed above 2 x HAProxy', () => {
    const j = judgeCpuPerRequest(relay([90, 92, 91], [0.4], [1]), relay([30, 31, 30], [0.2], [1]));
    expect(j).toMatchObject({ verdict: 'missed', value: 3.03 });
  });

  it('is unresolved when the proxy figure spreads by more than its distance to the bound', () => {
    const j = judgeCpuPerRequest(relay([55, 70, 61], [0.4], [1]), relay([30, 30, 30], [0.2], [1]));
    expect(j.verdict).toBe('unresolved');
    expect(j.why[0]).toMatch(
      /^the proxy's CPU per request moves by 15 µs between repetitions, more than its distance to the bound \(1 µs\)$/,
    );
  });

  it('is unresolved without a CPU reading', () => {
    const j = judgeCpuPerRequest(relay([Number.NaN], [Number.NaN], [1]), relay([30], [0.2], [1]));
    expect(j.verdict).toBe('unresolved');
  });
});

describe('memory per parked request', () => {
  it('is met at 64 KiB and below, unresolved when not measured', () => {
    expect(judgeParked(65_536).verdict).toBe('met');
    expect(judgeParked(65_537).verdict).toBe('missed');
    expect(judgeParked(null).verdict).toBe('unresolved');
  });
});

describe('helpers', () => {
  it('take the median and spread of finite values', () => {
    expect(medianOf([3, Number.NaN, 1, 2])).toBe(2);
    expect(medianOf([])).toBeNaN();
    expect(spreadOf([3, 1, Number.NaN])).toBe(2);
    expect(spreadOf([5])).toBe(0);
  });
});
