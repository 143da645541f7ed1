import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CalibrationInputError } from '../sim/engine/calibrate.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { histogramQuantile, parseScrape, parseScrapeSpec, scrapePoint } from './calibrate-scrape.js';
import { sluiceInProcess } from './test/process.js';

const FIX = join(REPO_ROOT, 'sim', 'engine', 'fixtures', 'inferencebench-h100-8b-scrape');
const C4 = join(FIX, 'c4.prom');
const C16 = join(FIX, 'c16.prom');
const dir = mkdtempSync(join(tmpdir(), 'sluice-scrape-'));
const file = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

describe('a vllm:* scrape as a calibration point', () => {
  it('interpolates the median inside its bucket, with the bucket as the error bound', () => {
    const h = new Map([
      [0.01, 0],
      [0.02, 30],
      [0.04, 80],
      [Number.POSITIVE_INFINITY, 80],
    ]);
    // Rank 40 of 80 is the 10th of the 50 in (0.02, 0.04]: 0.02 + 0.02 · 10/50.
    const q = histogramQuantile(h, 0.5, 'x');
    expect(q?.value).toBeCloseTo(0.024, 10);
    expect([q?.lower, q?.upper]).toEqual([0.02, 0.04]);
    expect(q?.relError).toBeCloseTo(0.016 / 0.024, 10);
    expect(histogramQuantile(new Map([[Number.POSITIVE_INFINITY, 0]]), 0.5, 'x')).toBeUndefined();
    expect(() =>
      histogramQuantile(
        new Map([
          [0.1, 5],
          [0.2, 3],
          [Number.POSITIVE_INFINITY, 5],
        ]),
        0.5,
        'h',
      ),
    ).toThrow(/h: bucket le="0.2" counts 3, fewer than the bucket below it \(5\)/);
    expect(() =>
      histogramQuantile(
        new Map([
          [0.1, 1],
          [Number.POSITIVE_INFINITY, 5],
        ]),
        0.5,
        'h',
      ),
    ).toThrow(/the median is in the \+Inf bucket \(above le="0.1"\)/);
  });

  it('reads the fixture: TTFT p50 interpolated, TPOT from the ITL mean when the ITL bucket is too wide, lengths and throughput from the counters', () => {
    const { point, notes } = scrapePoint(parseScrapeSpec(`${C16},interval=29.59,concurrency=16`));
    expect(point.ttftP50Ms).toBeCloseTo(41.647, 2);
    expect(notes.ttft.relError).toBeGreaterThan(0.4);
    expect(notes.itl).toBeUndefined();
    expect(point.tpotP50Ms).toBe(10.94);
    expect(point.outputTokensPerSec).toBeCloseTo(1384.2, 0);
    expect([point.requests, point.concurrency]).toEqual([320, 16]);
    const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(Math.abs(mean(point.promptTokens) / 256 - 1)).toBeLessThan(0.02);
    expect(Math.abs(mean(point.outputTokens) / 128 - 1)).toBeLessThan(0.02);
    // Without a concurrency, an open loop at the measured rate.
    const open = scrapePoint(parseScrapeSpec(`${C16},interval=29.59`)).point;
    expect([open.concurrency, open.requestRate]).toEqual([Number.POSITIVE_INFINITY, 10.814]);
  });

  it('differences two scrapes: the counters of the load between them', () => {
    const text = readFileSync(C16, 'utf8');
    // The same engine scraped before the load had run a tenth of it.
    const tenth = text.replace(
      /^(vllm:[^\s]+(?:\{[^}]*\})?) (\d+(?:\.\d+)?)$/gm,
      (_, k: string, v: string) => {
        return `${k} ${Number(v) / 10}`;
      },
    );
    const before = file('before.prom', tenth);
    const { point } = scrapePoint(parseScrapeSpec(`${C16},${before},interval=26.63,concurrency=16`));
    expect(point.requests).toBe(288);
    expect(point.tpotP50Ms).toBeCloseTo(10.94, 6);
    expect(point.outputTokensPerSec).toBeCloseTo((0.9 * 320 * 128) / 26.63, 0);
    expect(() => scrapePoint(parseScrapeSpec(`${before},${C16},interval=26.63`))).toThrow(
      /before\.prom: vllm:e2e_request_latency_seconds_count is 32, below 320 in .*c16\.prom: the engine restarted between the scrapes, or they are swapped/,
    );
    expect(() => scrapePoint(parseScrapeSpec(`${C16},${C16},interval=1`))).toThrow(
      /no request finished between the scrapes/,
    );
  });

  it('refuses bad scrape text and bad specs, naming the file, line, key and value', () => {
    const bad = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(CalibrationInputError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad(() => parseScrape('# HELP x\nvllm:x{a="1"} 1\nvllm:y{a=1} 2\n', 'm.prom'))).toMatch(
      /^m\.prom:3: not a Prometheus text-format sample line: "vllm:y\{a=1\} 2"/,
    );
    expect(bad(() => parseScrape('<html>oops</html>', 'm.prom'))).toMatch(/m\.prom:1: not a Prometheus/);
    expect(bad(() => parseScrape('# only comments\n', 'm.prom'))).toMatch(/m\.prom: no samples/);
    expect(bad(() => parseScrapeSpec(`${C4}`))).toMatch(/interval is "missing"; expected the seconds/);
    expect(bad(() => parseScrapeSpec(`${C4},interval=-1`))).toMatch(/interval is "-1"/);
    expect(bad(() => parseScrapeSpec(`${C4},interval=5,concurrency=0`))).toMatch(
      /concurrency is "0"; expected an integer >= 1/,
    );
    expect(bad(() => parseScrapeSpec(`${C4},interval=5,rate=3`))).toMatch(/unknown key "rate"/);
    expect(bad(() => parseScrapeSpec('a,b,c,interval=5'))).toMatch(
      /expected one scrape file or two \(after,before\), got 3/,
    );
    const noTtft = file(
      'nottft.prom',
      readFileSync(C4, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('vllm:time_to_first_token'))
        .join('\n'),
    );
    expect(bad(() => scrapePoint(parseScrapeSpec(`${noTtft},interval=5`)))).toMatch(
      /nottft\.prom: vllm:time_to_first_token_seconds_bucket missing or empty/,
    );
    const noGen = file(
      'nogen.prom',
      readFileSync(C4, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('vllm:generation_tokens_total'))
        .join('\n'),
    );
    expect(bad(() => scrapePoint(parseScrapeSpec(`${noGen},interval=5`)))).toMatch(
      /nogen\.prom: vllm:generation_tokens_total missing/,
    );
  });

  it('sluice calibrate --scrape fits the two fixture scrapes (TPOT within 10%) and exits 2 on bad scrape text', async () => {
    const r = await sluiceInProcess(
      'calibrate',
      '--scrape',
      `${C4},interval=17.65,concurrency=4`,
      '--scrape',
      `${C16},interval=29.59,concurrency=16`,
    );
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(
      /^c4\.prom: TTFT p50 22\.609 ms interpolated in bucket 20-40 ms \(error up to ±77%\); TPOT p50 taken as the ITL mean 6\.59 ms/m,
    );
    const row = (name: string): string[] =>
      (r.stdout.split('\n').find((l) => l.startsWith(`${name}  `)) ?? '').split('  ');
    for (const name of ['c4.prom', 'c16.prom']) {
      const tpot = row(name)[2]?.split(' ') ?? [];
      expect(Math.abs(Number(tpot[1]) / Number(tpot[0]) - 1)).toBeLessThan(0.1);
    }
    const ttft4 = row('c4.prom')[3]?.split(' ') ?? [];
    expect(Math.abs(Number(ttft4[1]) / Number(ttft4[0]) - 1)).toBeLessThan(0.2);
    const garbage = file('garbage.prom', 'vllm:num_requests_running 3\nthis is not a metric\n');
    const g = await sluiceInProcess(
      'calibrate',
      join(FIX, '..', 'inferencebench-h100-8b', 'c4.json'),
      '--scrape',
      `${garbage},interval=5`,
    );
    expect(g.code).toBe(2);
    expect(g.stderr).toMatch(
      /garbage\.prom:2: not a Prometheus text-format sample line: "this is not a metric"/,
    );
    const none = await sluiceInProcess('calibrate');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give vllm bench serve result files, --scrape specs, or both/);
  }, 60_000);
});
