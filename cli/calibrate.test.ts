import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { sluiceProcess } from './test/process.js';

const FIX = join(REPO_ROOT, 'sim', 'engine', 'fixtures', 'inferencebench-h100-8b');

describe('sluice calibrate', () => {
  it('prints measured vs fitted for every result and writes the fitted profile', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sluice-cal-')), 'my-h100.json');
    const files = [1, 4, 16, 64].map((c) => join(FIX, `c${c}.json`));
    const r = await sluiceProcess(['calibrate', ...files, '--out', out]);
    expect(r.code).toBe(0);
    for (const c of [1, 4, 16, 64]) expect(r.stdout).toMatch(new RegExp(`^c${c}\\.json  ${c}  `, 'm'));
    expect(r.stdout).toMatch(/fitted: memory efficiency 0\.\d+, host per sequence 0\.\d+ ms/);
    const profile = JSON.parse(readFileSync(out, 'utf8'));
    expect(profile.base).toBe('llama-3.1-8b-h100');
    expect(profile.terms.hostPerSeqMs).toBeGreaterThan(0.5);
  }, 60_000);

  it('exits 2 with a clear message on one result, or on a file that is not a result', async () => {
    const one = await sluiceProcess(['calibrate', join(FIX, 'c4.json')]);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/need at least 2 results at different concurrencies/);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cal-'));
    writeFileSync(join(dir, 'bad.json'), '{"max_concurrency": 4, "request_rate": "inf", "completed": 3}');
    const bad = await sluiceProcess(['calibrate', join(dir, 'bad.json'), join(FIX, 'c4.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json: field median_ttft_ms missing/);
  }, 60_000);

  it('sluice engine --profile-file refuses a file fitted for another profile (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cal-'));
    const f = join(dir, 'a100.json');
    writeFileSync(f, JSON.stringify({ base: 'llama-3.1-8b-a100-40g', terms: {} }));
    const r = await sluiceProcess(['engine', '--port', '0', '--profile-file', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /base is "llama-3\.1-8b-a100-40g", but it is applied to profile llama-3\.1-8b-h100/,
    );
  }, 60_000);
});
