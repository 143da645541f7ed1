/**
 * `sluice size`, `merge` and `check` as a user runs them: exit codes (0 ok,
 * 1 regression, 2 bad input), stdout and stderr. One test runs the real
 * binary; the rest drive the same command tree in process (a process start
 * costs up to a second or two of tsx start-up when the bundle in dist/ is stale).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_LOXILB } from '../sweep/test/fixtures.js';
import { assertWellFormedXml } from '../sweep/test/xml-helpers.js';
import { type ProcessResult, sluiceProcess as runSluice, sluiceInProcess } from './test/process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
const scenario = join(dir, 'tiny.yaml');
writeFileSync(scenario, TINY_LOXILB);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the real binary in the test's directory. */
const sluiceProcess = (...args: string[]): Promise<ProcessResult> => runSluice(args, dir);

/** Runs the command tree in process, capturing stdout, stderr and the exit code. */
const sluice = sluiceInProcess;

const GRID = ['--vary', 'fc_max_outstanding=4,8', '--vary', 'fc_max_queue_depth=0,8', '--seeds', '2'];

describe('sluice size and merge', () => {
  it('exits 2 naming the flag, field, value and bound for a --vary out of bounds', async () => {
    const r = await sluiceProcess('size', 'tiny.yaml', '--vary', 'fc_max_queue_depth=0,70000');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'sluice: --vary fc_max_queue_depth=0,70000: fc_max_queue_depth 70000 is above the maximum 65536\n',
    );
  });

  it('exits 2 for an unknown SLO metric', async () => {
    const r = await sluice('size', scenario, '--vary', 'fc_max_outstanding=4', '--slo', 'p95<=2000');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sluice: --slo "p95<=2000": unknown metric "p95"; known: goodput_rps, /);
  });

  it('prints one JSON object with the recommended rule and every point, equal to the merged shards', async () => {
    const full = await sluice(
      'size',
      scenario,
      ...GRID,
      '--slo',
      'shed_rate<=0.5',
      '--json',
      '--workers',
      '2',
    );
    expect(full.code).toBe(0);
    // Only progress lines (a sweep over 5 s prints one off a TTY), never an error.
    expect(full.stderr.split('\n').filter((l) => l !== '' && !/^sweep: \d+\/\d+ /.test(l))).toEqual([]);
    const result = JSON.parse(full.stdout);
    expect(result.points).toHaveLength(4);
    expect(result.recommendation.rule.serviceArguments.externalIP).toBe('192.0.2.10');
    const shards = join(dir, 'shards');
    for (const i of [0, 1]) {
      const s = await sluice(
        'size',
        scenario,
        ...GRID,
        '--slo',
        'shed_rate<=0.5',
        '--shard',
        `${i}/2`,
        '--out',
        shards,
      );
      expect(s.code).toBe(0);
      expect(s.stdout).toBe(`wrote ${join(shards, `shard-${i}-of-2.json`)}: 4 runs of shard ${i}/2\n`);
    }
    const merged = await sluice('merge', shards, '--json');
    expect(merged.code).toBe(0);
    expect(merged.stdout).toBe(full.stdout);
  });

  it('exits 2 when a shard is missing from a merge, or --shard is malformed', async () => {
    const out = join(dir, 'partial');
    await sluice('size', scenario, ...GRID, '--shard', '1/3', '--out', out);
    const r = await sluice('merge', out);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('(shards 0/3, 2/3 not given)');
    const bad = await sluice('size', scenario, ...GRID, '--shard', '3/3', '--out', out);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--shard 3/3: i must be from 0 to 2');
  });

  it('exits 1 (a finding) when no point meets every SLO, and still prints the result', async () => {
    const r = await sluice('size', scenario, ...GRID, '--slo', 'goodput_rps>=1000000', '--workers', '0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('No point meets every SLO.');
    const json = await sluice(
      'size',
      scenario,
      ...GRID,
      '--slo',
      'goodput_rps>=1000000',
      '--workers',
      '0',
      '--json',
    );
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).recommendation.feasible).toBe(false);
    const shards = join(dir, 'infeasible');
    const shard = await sluice(
      'size',
      scenario,
      ...GRID,
      '--slo',
      'goodput_rps>=1000000',
      '--workers',
      '0',
      '--shard',
      '0/1',
      '--out',
      shards,
    );
    expect(shard.code).toBe(0);
    const merged = await sluice('merge', shards);
    expect(merged.code).toBe(1);
    expect(merged.stdout).toContain('No point meets every SLO.');
  });
});

describe('sluice check', () => {
  const baseline = join(dir, 'baseline.json');

  it('writes a baseline, then passes against it (exit 0) and writes JUnit XML', async () => {
    expect((await sluice('check', scenario, '--baseline', baseline, '--update-baseline')).code).toBe(0);
    const junit = join(dir, 'junit.xml');
    const r = await sluice('check', scenario, '--baseline', baseline, '--junit', junit, '--workers', '0');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 scenario: 1 passed, 0 failed');
    expect(assertWellFormedXml(readFileSync(junit, 'utf8'))).toBe('testsuites');
  });

  it('exits 1 on a goodput regression and prints what moved', async () => {
    const b = JSON.parse(readFileSync(baseline, 'utf8'));
    b.scenarios.tiny.runs[0].figures.goodput_rps += 0.5;
    const worse = join(dir, 'worse.json');
    writeFileSync(worse, JSON.stringify(b));
    const r = await sluice('check', scenario, '--baseline', worse, '--workers', '0');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/What moved:\n.*\ntiny\s+7\s+goodput_rps\s+.*REGRESSED/);
    const tolerated = await sluice(
      'check',
      scenario,
      '--baseline',
      worse,
      '--tolerance',
      'goodput_rps=0.5',
      '--workers',
      '0',
    );
    expect(tolerated.code).toBe(0);
  });

  it('exits 2 on a bad --tolerance or a missing baseline file', async () => {
    expect(
      (await sluice('check', scenario, '--baseline', baseline, '--tolerance', 'goodput_rps=lots')).code,
    ).toBe(2);
    const r = await sluice('check', scenario, '--baseline', join(dir, 'nope.json'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no such file; create it with --update-baseline');
  });
});
