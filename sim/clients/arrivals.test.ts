import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import {
  type ArrivalConfig,
  burstArrivals,
  constantArrivals,
  createArrivalProcess,
  mergeArrivals,
  mergeIndexed,
  takeArrivals,
  traceArrivals,
} from './arrivals.js';
import { expectedCount, nextArrivalMs, rateAt } from './rate-profile.js';

const seeded = (seed = 'x') => seedrandom(seed);
const countIn = (times: readonly number[], fromMs: number, toMs: number): number =>
  times.filter((t) => t >= fromMs && t < toMs).length;
const run = (config: ArrivalConfig, seed = 'x'): number[] =>
  takeArrivals(createArrivalProcess(config, seeded(seed)));

describe('constant arrivals', () => {
  it('are evenly spaced from startMs and stop at the end of the duration', () => {
    expect(run({ kind: 'constant', ratePerSec: 4, startMs: 1000, durationMs: 1000 })).toEqual([
      1000, 1250, 1500, 1750,
    ]);
  });

  it('stop after maxArrivals', () => {
    expect(run({ kind: 'constant', ratePerSec: 1000, maxArrivals: 3 })).toEqual([0, 1, 2]);
  });
});

describe('poisson arrivals', () => {
  it('have the configured mean rate within 1.5% over 100,000 arrivals at a fixed seed', () => {
    const times = run({ kind: 'poisson', ratePerSec: 250, maxArrivals: 100_000 });
    expect(times).toHaveLength(100_000);
    const observedPerSec = (times.length / (times[times.length - 1] ?? 1)) * 1000;
    expect(Math.abs(observedPerSec / 250 - 1)).toBeLessThan(0.015);
  });

  it('have exponential gaps: the coefficient of variation is 1 within 2%', () => {
    const times = run({ kind: 'poisson', ratePerSec: 50, maxArrivals: 50_000 });
    const gaps = times.map((t, i) => t - (i === 0 ? 0 : (times[i - 1] ?? 0)));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
    expect(Math.abs(sd / mean - 1)).toBeLessThan(0.02);
  });

  it('give the same sequence for the same seed and a different one for another seed', () => {
    const config: ArrivalConfig = { kind: 'poisson', ratePerSec: 10, maxArrivals: 1000 };
    expect(run(config, 'x')).toEqual(run(config, 'x'));
    expect(run(config, 'y')).not.toEqual(run(config, 'x'));
  });

  it('pin the first arrivals of seed "x" at 10 req/s', () => {
    const first = run({ kind: 'poisson', ratePerSec: 10, maxArrivals: 3 });
    expect(first).toEqual([238.66350386998297, 374.76225691028776, 511.27966212845377]);
  });

  it('end at durationMs', () => {
    const times = run({ kind: 'poisson', ratePerSec: 100, startMs: 500, durationMs: 2000 });
    expect(Math.min(...times)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...times)).toBeLessThan(2500);
  });
});

describe('rate profiles (time rescaling)', () => {
  it('invert the cumulative rate exactly on a linear segment', () => {
    const profile = [{ startMs: 0, endMs: 10_000, startRatePerSec: 0, endRatePerSec: 100 }];
    const u = 0.5;
    const t = nextArrivalMs(profile, 0, () => u) ?? Number.NaN;
    // rate = 1e-5·t per ms, so Λ(t) = 1e-5/2 · t² must equal −ln(1 − u).
    expect((1e-5 / 2) * t * t).toBeCloseTo(-Math.log(1 - u), 12);
  });

  it('carry leftover mass across segments', () => {
    const profile = [
      { startMs: 0, endMs: 1000, startRatePerSec: 1, endRatePerSec: 1 },
      { startMs: 1000, endMs: 2000, startRatePerSec: 0, endRatePerSec: 0 },
      { startMs: 2000, endMs: 3000, startRatePerSec: 1000, endRatePerSec: 1000 },
    ];
    // u = 1 − e^{−2}: mass 2; segment 1 holds 1, segment 2 none, so 1 more at 1 per ms after 2000.
    const t = nextArrivalMs(profile, 0, () => 1 - Math.exp(-2)) ?? Number.NaN;
    expect(t).toBeCloseTo(2001, 9);
  });

  it('report rate and expected count', () => {
    const profile = [{ startMs: 0, endMs: 60_000, startRatePerSec: 0, endRatePerSec: 100 }];
    expect(rateAt(profile, 30_000)).toBe(50);
    expect(expectedCount(profile, 0, 60_000)).toBe(3000);
    expect(rateAt(profile, 60_000)).toBe(0);
  });
});

describe('ramp arrivals', () => {
  it('integrate to the expected count (0 → 1000 req/s over 60 s = 30,000) within 2%', () => {
    const times = run({ kind: 'ramp', fromRatePerSec: 0, toRatePerSec: 1000, durationMs: 60_000 });
    expect(Math.abs(times.length / 30_000 - 1)).toBeLessThan(0.02);
  });

  it('put a quarter of the arrivals in the first half and three quarters in the second', () => {
    const times = run({ kind: 'ramp', fromRatePerSec: 0, toRatePerSec: 1000, durationMs: 60_000 });
    expect(Math.abs(countIn(times, 0, 30_000) / 7500 - 1)).toBeLessThan(0.03);
    expect(Math.abs(countIn(times, 30_000, 60_000) / 22_500 - 1)).toBeLessThan(0.02);
  });

  it('handle a falling ramp', () => {
    const times = run({ kind: 'ramp', fromRatePerSec: 400, toRatePerSec: 100, durationMs: 100_000 });
    expect(Math.abs(times.length / 25_000 - 1)).toBeLessThan(0.02);
    expect(countIn(times, 0, 50_000)).toBeGreaterThan(countIn(times, 50_000, 100_000));
  });
});

describe('step arrivals', () => {
  it('follow each step rate', () => {
    const times = run({
      kind: 'step',
      steps: [
        { durationMs: 20_000, ratePerSec: 100 },
        { durationMs: 20_000, ratePerSec: 0 },
        { durationMs: 20_000, ratePerSec: 400 },
      ],
    });
    expect(Math.abs(countIn(times, 0, 20_000) / 2000 - 1)).toBeLessThan(0.05);
    expect(countIn(times, 20_000, 40_000)).toBe(0);
    expect(Math.abs(countIn(times, 40_000, 60_000) / 8000 - 1)).toBeLessThan(0.03);
    expect(countIn(times, 60_000, Number.POSITIVE_INFINITY)).toBe(0);
  });
});

describe('spike arrivals', () => {
  it('add the spike rate on top of the base during the spike only', () => {
    const times = run({
      kind: 'spike',
      baseRatePerSec: 100,
      durationMs: 60_000,
      spikeAtMs: 20_000,
      spikeDurationMs: 10_000,
      spikeRatePerSec: 900,
    });
    expect(Math.abs(countIn(times, 0, 20_000) / 2000 - 1)).toBeLessThan(0.06);
    expect(Math.abs(countIn(times, 20_000, 30_000) / 10_000 - 1)).toBeLessThan(0.03);
    expect(Math.abs(countIn(times, 30_000, 60_000) / 3000 - 1)).toBeLessThan(0.06);
  });

  it('send spikeCount requests at once at spikeAtMs, in time order with the base traffic', () => {
    const times = run({
      kind: 'spike',
      baseRatePerSec: 50,
      durationMs: 10_000,
      spikeAtMs: 4000,
      spikeCount: 500,
    });
    expect(times.filter((t) => t === 4000)).toHaveLength(500);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('rejects a rate spike without its duration, with the field in the message', () => {
    expect(() =>
      createArrivalProcess(
        { kind: 'spike', baseRatePerSec: 1, durationMs: 1, spikeAtMs: 0, spikeRatePerSec: 5 },
        seeded(),
      ),
    ).toThrow('arrival.spikeRatePerSec: 5 is not a rate >= 0 given with spikeDurationMs (or use spikeCount)');
  });
});

describe('diurnal arrivals', () => {
  const config: ArrivalConfig = {
    kind: 'diurnal',
    meanRatePerSec: 50,
    amplitudePerSec: 40,
    periodMs: 60_000,
    durationMs: 600_000,
  };
  // Per period, ∫ over a quarter = mean·P/4 ± amplitude·P/(2π).
  const quarterMs = 15_000;
  const swing = (40 * 60) / (2 * Math.PI);
  const quarterCounts = (times: readonly number[]) =>
    [0, 1, 2, 3].map((q) => {
      let n = 0;
      for (let p = 0; p < 10; p += 1)
        n += countIn(times, p * 60_000 + q * quarterMs, p * 60_000 + (q + 1) * quarterMs);
      return n;
    });

  it('follow the sine: quarter-period counts match the integral of the rate within 4%', () => {
    const [q1, q2, q3, q4] = quarterCounts(run(config));
    const expected = [750 + swing, 750 + swing, 750 - swing, 750 - swing].map((x) => x * 10);
    [q1, q2, q3, q4].forEach((q, i) => {
      expect(Math.abs((q ?? 0) / (expected[i] ?? 1) - 1)).toBeLessThan(0.04);
    });
  });

  it('have the mean rate overall within 2%', () => {
    expect(Math.abs(run(config).length / 30_000 - 1)).toBeLessThan(0.02);
  });

  it('reject an amplitude above the mean', () => {
    expect(() => createArrivalProcess({ ...config, amplitudePerSec: 60 } as ArrivalConfig, seeded())).toThrow(
      'arrival.amplitudePerSec: 60 is not at most meanRatePerSec (50)',
    );
  });
});

describe('trace replay arrivals', () => {
  it('divide recorded times by the speed-up and shift them to startMs', () => {
    expect(run({ kind: 'trace', atMs: [0, 1000, 1000, 4000], speedup: 4, startMs: 100 })).toEqual([
      100, 350, 350, 1100,
    ]);
  });

  it('reject a time that runs backwards, naming the index', () => {
    const p = traceArrivals([0, 10, 5]);
    p.next();
    p.next();
    expect(() => p.next()).toThrow('arrival.atMs[2]: 5 is not a time >= the previous one (10)');
  });
});

describe('merging arrival processes', () => {
  it('interleaves by time, ties to the source listed first, and tells the source', () => {
    const merged = mergeIndexed([constantArrivals(1, 0, 3000), burstArrivals(1000, 2)]);
    const out = [];
    for (let n = merged.next(); n !== undefined; n = merged.next()) out.push(n);
    expect(out).toEqual([
      { atMs: 0, source: 0 },
      { atMs: 1000, source: 0 },
      { atMs: 1000, source: 1 },
      { atMs: 1000, source: 1 },
      { atMs: 2000, source: 0 },
    ]);
    expect(takeArrivals(mergeArrivals([burstArrivals(5, 1), constantArrivals(1000, 0, 3)]))).toEqual([
      0, 1, 2, 5,
    ]);
  });
});

describe('arrival config errors', () => {
  it('name the field, the value and the bound', () => {
    expect(() => createArrivalProcess({ kind: 'poisson', ratePerSec: -1 }, seeded())).toThrow(
      'arrival.ratePerSec: -1 is not a positive number',
    );
    expect(() =>
      createArrivalProcess({ kind: 'step', steps: [{ durationMs: 10, ratePerSec: Number.NaN }] }, seeded()),
    ).toThrow('arrival.steps[0].ratePerSec: NaN is not a number >= 0');
  });
});

describe('every arrival kind', () => {
  const kinds: ArrivalConfig[] = [
    { kind: 'constant', ratePerSec: 50, durationMs: 10_000 },
    { kind: 'poisson', ratePerSec: 50, durationMs: 10_000 },
    { kind: 'ramp', fromRatePerSec: 10, toRatePerSec: 90, durationMs: 10_000 },
    {
      kind: 'step',
      steps: [
        { durationMs: 5000, ratePerSec: 20 },
        { durationMs: 5000, ratePerSec: 80 },
      ],
    },
    {
      kind: 'spike',
      baseRatePerSec: 20,
      durationMs: 10_000,
      spikeAtMs: 3000,
      spikeDurationMs: 1000,
      spikeRatePerSec: 200,
    },
    { kind: 'spike', baseRatePerSec: 20, durationMs: 10_000, spikeAtMs: 3000, spikeCount: 100 },
    {
      kind: 'diurnal',
      meanRatePerSec: 50,
      amplitudePerSec: 50,
      periodMs: 4000,
      phaseMs: 1000,
      durationMs: 10_000,
    },
    { kind: 'trace', atMs: [0, 5, 5, 9000], speedup: 0.5 },
  ];

  it.each(kinds.map((c, i) => [`${c.kind} #${i}`, c] as const))(
    '%s gives non-decreasing times, the same for the same seed',
    (_name, config) => {
      const times = run({ ...config, startMs: 250 });
      expect(times.length).toBeGreaterThan(0);
      expect(times[0]).toBeGreaterThanOrEqual(250);
      expect(times.every((t, i) => i === 0 || t >= (times[i - 1] ?? 0))).toBe(true);
      expect(run({ ...config, startMs: 250 })).toEqual(times);
    },
  );
});
