/**
 * A calibrated profile file names its base, so a scenario may give `profile_file` alone, and it
 * may be YAML as well as JSON (`sluice calibrate --out my-h100.yaml` writes YAML). Each test runs
 * the same scenario written the long way (`profile` + `profile_file`) and compares, so a reader
 * that ignored the file or took another base would fail.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { sluiceInProcess } from './test/process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-profile-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SLOW = {
  base: 'llama-3.1-8b-h100',
  terms: { memEfficiency: 0.7, hostPerSeqMs: 2, mfu: 0.3, apiOverheadMs: 200 },
};
writeFileSync(
  join(dir, 'slow.yaml'),
  `# hand-written\nbase: llama-3.1-8b-h100\nterms:\n  memEfficiency: 0.7\n  hostPerSeqMs: 2\n  mfu: 0.3\n  apiOverheadMs: 200\n`,
);
writeFileSync(join(dir, 'slow.json'), JSON.stringify(SLOW));

const scenario = (engines: string): string => `
name: calibrated
description: one engine of a calibrated profile
seed: 3
duration_s: 10
warmup_s: 1
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
      fc_mode: enforce
      fc_max_outstanding: 16
      fc_max_queue_depth: 16
      fc_max_queue_wait_ms: 2000
engines:
${engines}
clients:
  arrival: { kind: poisson, rate_per_sec: 4 }
  prompt_tokens: { kind: fixed, value: 256 }
  output_tokens: { kind: fixed, value: 32 }
`;

async function runJson(
  name: string,
  engines: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, scenario(engines));
  return sluiceInProcess('run', file, '--out', join(dir, `out-${name}`), '--json');
}

describe('profile_file alone, YAML or JSON', () => {
  it('runs profile_file alone on its base, the same as profile + profile_file, from YAML and JSON alike', async () => {
    const long = await runJson('long', '  - { profile: llama-3.1-8b-h100, profile_file: slow.json }');
    const alone = await runJson('alone', '  - { profile_file: slow.yaml }');
    const aloneJson = await runJson('alone-json', '  - { profile_file: slow.json }');
    for (const r of [long, alone, aloneJson]) expect([r.code, r.stderr]).toEqual([0, '']);
    const ttft = (s: string): number => (JSON.parse(s) as { ttft_ms: { p50: number } }).ttft_ms.p50;
    expect(ttft(long.stdout)).toBeGreaterThan(200);
    expect(ttft(alone.stdout)).toBe(ttft(long.stdout));
    expect(ttft(aloneJson.stdout)).toBe(ttft(long.stdout));
  }, 60_000);

  it('refuses a group with neither profile nor profile_file, naming the field', async () => {
    const r = await runJson('none', '  - { count: 2 }');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('engines[0].profile');
    expect(r.stderr).toContain('profile_file');
  });

  it('refuses a profile_file that is not YAML, or names no base, naming the file and the field', async () => {
    writeFileSync(join(dir, 'prof-broken.yaml'), 'base: [unclosed\n');
    writeFileSync(join(dir, 'prof-nobase.yaml'), 'terms: { mfu: 0.3 }\n');
    const broken = await runJson('broken', '  - { profile_file: prof-broken.yaml }');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('prof-broken.yaml: not a YAML or JSON file');
    const nobase = await runJson('nobase', '  - { profile_file: prof-nobase.yaml }');
    expect(nobase.code).toBe(2);
    expect(nobase.stderr).toContain('prof-nobase.yaml: field base is missing');
  });

  it('refuses profile and profile_file of different bases', async () => {
    const r = await runJson('mismatch', '  - { profile: llama-3.1-70b-tp4-h100, profile_file: slow.yaml }');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('base is "llama-3.1-8b-h100"');
  });

  it('calibrate --out NAME.yaml writes YAML that reads back as the same terms as the JSON', async () => {
    const fx = join(REPO_ROOT, 'sim', 'engine', 'fixtures', 'inferencebench-h100-8b');
    const inputs = ['c1.json', 'c4.json'].map((f) => join(fx, f));
    const y = await sluiceInProcess('calibrate', ...inputs, '--out', join(dir, 'fit.yaml'));
    const j = await sluiceInProcess('calibrate', ...inputs, '--out', join(dir, 'fit.json'));
    expect([y.code, j.code]).toEqual([0, 0]);
    const yaml = readFileSync(join(dir, 'fit.yaml'), 'utf8');
    expect(yaml.startsWith('#')).toBe(true);
    expect(parse(yaml)).toEqual(JSON.parse(readFileSync(join(dir, 'fit.json'), 'utf8')));
  }, 120_000);
});
