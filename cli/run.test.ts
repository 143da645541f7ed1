import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { type ProcessResult, sluiceProcess } from './test/process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the real binary from the checkout's root. */
const sluice = (...args: string[]): Promise<ProcessResult> => sluiceProcess(args, REPO_ROOT);

describe('sluice run and validate', () => {
  it('runs a scenario into an out directory with the records, the time series, the summary and the report', async () => {
    const out = join(dir, 'mmck');
    const r = await sluice('run', 'scenarios/mmck-check.yaml', '--seed', '3', '--out', out, '--json');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { seed: number; conservation_ok: boolean };
    expect(summary.seed).toBe(3);
    expect(summary.conservation_ok).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toEqual(summary);
    expect(readFileSync(join(out, 'requests.csv'), 'utf8').split('\n')[0]).toMatch(
      /^id,logical_id,attempt,tenant,/,
    );
    expect(existsSync(join(out, 'timeseries.csv'))).toBe(true);
    expect(existsSync(join(out, 'report', 'report.html'))).toBe(true);
  });

  it('exits 2 naming the file, line, field and value of an invalid scenario', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      [
        'name: bad',
        'duration_s: 10',
        'gate:',
        '  rule:',
        '    serviceArguments:',
        '      externalIP: 192.0.2.10',
        '      port: 8080',
        '      mode: 4',
        '      sse_mode: true',
        '      fc_max_queue_depth: 70000',
        'engines:',
        '  - profile: exponential',
        '    mean_service_ms: 100',
        'clients:',
        '  arrival: { kind: poisson, rate_per_sec: 1 }',
        '',
      ].join('\n'),
    );
    const v = await sluice('validate', bad);
    expect(v.code).toBe(2);
    expect(v.stderr).toContain(
      `${bad}:10:27: gate.rule.serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536`,
    );
    const r = await sluice('run', bad);
    expect(r.code).toBe(2);
  });

  it('exits 2 on a bad flag value, naming the flag', async () => {
    const r = await sluice('run', 'scenarios/default.yaml', '--seed', 'soon');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--seed: "soon" is not an integer');
  });

  const SMALL = [
    'name: small',
    'duration_s: 10',
    'gate:',
    '  rule:',
    '    serviceArguments:',
    '      externalIP: 192.0.2.10',
    '      port: 8080',
    '      mode: 4',
    '      sse_mode: true',
    'engines:',
    '  - profile: exponential',
    '    mean_service_ms: 100',
    'clients:',
    '  arrival: { kind: poisson, rate_per_sec: 1 }',
    '',
  ].join('\n');

  it('refuses what a run cannot do in validate and run alike, at once: 1e308 req/s, 40,000 unknown keys, a 50 MB file', async () => {
    const rate = join(dir, 'rate.yaml');
    writeFileSync(rate, SMALL.replace('rate_per_sec: 1 }', 'rate_per_sec: 1e308 }'));
    const keys = join(dir, 'keys.yaml');
    writeFileSync(keys, SMALL + Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}\n`).join(''));
    const big = join(dir, 'big.yaml');
    writeFileSync(big, Buffer.alloc(50 * 1024 * 1024, 'a'));
    for (const cmd of ['validate', 'run']) {
      const r = await sluice(cmd, rate);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('clients.arrival.rate_per_sec: 1e+308 is above the maximum 1000000');
    }
    const k = await sluice('validate', keys);
    expect(k.code).toBe(2);
    expect(k.stderr.trim().split('\n')).toHaveLength(21);
    expect(k.stderr).toContain(`${keys}: and 39980 more problems`);
    const b = await sluice('run', big);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain(
      `${big}: the file is 52428800 bytes; expected a scenario file of at most 4194304 bytes`,
    );
  }, 60_000);

  it('exits 2 naming file and line of a trace line over the length limit', async () => {
    const trace = join(dir, 'long.jsonl');
    const ok = '{"timestamp": 0, "input_length": 10, "output_length": 5}\n';
    writeFileSync(trace, `${ok}{"timestamp": 1, "x": "${'y'.repeat(1 << 20)}"}\n`);
    const sc = join(dir, 'trace.yaml');
    writeFileSync(
      sc,
      SMALL.replace(
        '  arrival: { kind: poisson, rate_per_sec: 1 }',
        `  trace: { file: ${JSON.stringify(trace)} }`,
      ),
    );
    const r = await sluice('run', sc);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('long.jsonl:2: line is');
    expect(r.stderr).toContain('expected a line of at most 1048576 characters');
  }, 60_000);

  it('refuses a scenario name that would leave the output directory', async () => {
    const f = join(dir, 'name.yaml');
    writeFileSync(f, SMALL.replace('name: small', 'name: ../../etc/escape'));
    const r = await sluice('validate', f);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f}:1:7: name: "../../etc/escape" is not a plain name`);
  });
});
