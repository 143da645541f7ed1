import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/resolve.js';
import { type ProcessResult, sluiceProcess } from './test-process.js';

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
});
