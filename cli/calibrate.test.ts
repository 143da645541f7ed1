import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { sluiceInProcess, sluiceProcess } from './test/process.js';

const FIX = join(REPO_ROOT, 'sim', 'engine', 'fixtures', 'inferencebench-h100-8b');
const fixture = (c: number): Record<string, unknown> =>
  JSON.parse(readFileSync(join(FIX, `c${c}.json`), 'utf8')) as Record<string, unknown>;

/** Writes `files` (name → JSON value or raw text) into a fresh directory; returns their paths. */
function write(files: Record<string, unknown>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cal-'));
  return Object.entries(files).map(([name, v]) => {
    const f = join(dir, name);
    writeFileSync(f, typeof v === 'string' ? v : JSON.stringify(v));
    return f;
  });
}

describe('sluice calibrate', () => {
  it('prints measured vs fitted for every result, marks the points outside the bounds and writes the fitted profile', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sluice-cal-')), 'my-h100.json');
    const files = [1, 4, 16, 64].map((c) => join(FIX, `c${c}.json`));
    const r = await sluiceProcess(['calibrate', ...files, '--out', out]);
    expect(r.code).toBe(0);
    for (const c of [1, 4, 16, 64]) {
      expect(r.stdout).toMatch(new RegExp(`^c${c}\\.json  concurrency ${c}  [^(]*$`, 'm'));
    }
    expect(r.stdout).toMatch(/^4 of 4 points within ±10% TPOT p50 and ±20% TTFT p50$/m);
    expect(r.stdout).toMatch(
      /fitted: memory efficiency 0\.\d+, host per sequence 0\.\d+ ms, mfu 0\.\d+, frontend \d+\.\d+ ms idle \+ 0\.\d+ ms per streamed token/,
    );
    // Without the frontend's load term, c = 16's TTFT is out of reach (docs/calibrate.md),
    // and the table marks it.
    const constant = await sluiceProcess(['calibrate', ...files, '--no-frontend-load']);
    expect(constant.code).toBe(0);
    expect(constant.stdout).toMatch(
      /^c16\.json {2}concurrency 16 {2}10\.94 \S+ \+\d\.\d% {2}41\.69 \S+ -\d+\.\d% \(outside ±20%\)/m,
    );
    expect(constant.stdout).toMatch(/^3 of 4 points within ±10% TPOT p50 and ±20% TTFT p50$/m);
    expect(constant.stdout).toMatch(/ms idle \+ 0\.000 ms per streamed token/);
    const profile = JSON.parse(readFileSync(out, 'utf8'));
    expect(profile.base).toBe('llama-3.1-8b-h100');
    expect(profile.terms.hostPerSeqMs).toBeGreaterThan(0.5);
    expect(profile.terms.frontendPerTokenMs).toBeGreaterThan(0.1);
  }, 120_000);

  it('exits 2 naming the file, the field, the value and the bound, for each kind of bad input', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { 'list.json': [1, 2], 'c4.json': fixture(4) },
        /list\.json: not a vllm bench serve result \(expected a JSON object, got a list\)/,
      ],
      [{ 'text.json': 'max_concurrency: 4', 'c4.json': fixture(4) }, /text\.json: not JSON/],
      [
        { 'bad.json': { max_concurrency: 4, request_rate: 'inf', completed: 3 }, 'c4.json': fixture(4) },
        /bad\.json: field median_ttft_ms is missing; expected a number > 0/,
      ],
      [
        { 'neg.json': { ...fixture(16), median_tpot_ms: -1 }, 'c4.json': fixture(4) },
        /neg\.json: field median_tpot_ms is -1; expected a number > 0/,
      ],
      [
        { 'rate.json': { ...fixture(16), request_rate: 'fast' }, 'c4.json': fixture(4) },
        /rate\.json: field request_rate is "fast"; expected "inf" or a number of requests\/s > 0/,
      ],
      [
        { 'conc.json': { ...fixture(16), max_concurrency: 2.5 }, 'c4.json': fixture(4) },
        /conc\.json: field max_concurrency is 2\.5; expected an integer >= 1, or null \(no cap\)/,
      ],
      [{ 'c4.json': fixture(4) }, /need at least 2 results at different loads, got 1/],
      [
        { 'a.json': fixture(4), 'b.json': fixture(4) },
        /all 2 results have the same load \(concurrency 4\): need at least 2 different max_concurrency or request_rate values/,
      ],
      [
        { 'a.json': fixture(4), 'b.json': { ...fixture(4), median_tpot_ms: 20 }, 'c.json': fixture(16) },
        /(a|b)\.json and (a|b)\.json contradict each other: same load \(concurrency 4\) and lengths, median_tpot_ms/,
      ],
      [
        { 'c4.json': fixture(4), 'c64.json': { ...fixture(64), median_tpot_ms: 2 } },
        /c64\.json and c4\.json contradict each other: c64\.json \(concurrency 64\) has median_tpot_ms 2, under 6\.59\/1\.5/,
      ],
    ];
    for (const [files, message] of cases) {
      const r = await sluiceInProcess('calibrate', ...write(files));
      expect(r.code, JSON.stringify(Object.keys(files))).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    const missing = await sluiceInProcess('calibrate', join(FIX, 'c4.json'), join(FIX, 'c5.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/c5\.json/);
  }, 60_000);

  it('sluice engine --profile-file refuses a file fitted for another profile (exit 2)', async () => {
    const [f] = write({ 'a100.json': { base: 'llama-3.1-8b-a100-40g', terms: {} } });
    const r = await sluiceProcess([
      'engine',
      '--port',
      '0',
      '--profile',
      'llama-3.1-8b-h100',
      '--profile-file',
      f as string,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /base is "llama-3\.1-8b-a100-40g", but it is applied to profile llama-3\.1-8b-h100/,
    );
    // Without --profile the file's own base is taken, and then its empty terms are what is wrong.
    const own = await sluiceProcess(['engine', '--port', '0', '--profile-file', f as string]);
    expect(own.code).toBe(2);
    expect(own.stderr).toMatch(/terms\.memEfficiency is undefined; expected a number from 0\.2 to 1/);
  }, 60_000);
});
