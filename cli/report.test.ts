import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { saveCliff, saveSweep } from '../reports/files.js';
import { fixtureCliff, fixtureSweep, writeFixtureRun } from '../reports/test/fixtures.js';
import { reportCommand } from './report.js';

const root = mkdtempSync(join(tmpdir(), 'sluice-cli-report-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `sluice report ...args`, capturing stdout and stderr. */
async function run(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  const sub = reportCommand();
  let out = '';
  let err = '';
  sub.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  const program = new Command('sluice').exitOverride().addCommand(sub);
  try {
    await program.parseAsync(['node', 'sluice', 'report', ...args]);
    return { out, err, code: 0 };
  } catch (e) {
    if (e instanceof CommanderError) return { out, err, code: e.exitCode };
    throw e;
  }
}

describe('sluice report', () => {
  it('re-renders a run directory into DIR/report', async () => {
    const dir = join(root, 'run');
    writeFixtureRun(dir, 5);
    const r = await run(dir);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^run report: .*report\.html, .*report\.md; 5 charts \(\.vl\.json, \.svg, \.png\); 1 CSV in /,
    );
    expect(readFileSync(join(dir, 'report', 'report.md'), 'utf8')).toContain(
      '![Goodput share per tenant](tenants.png)',
    );
  });

  it('re-renders a sweep to --out and prints the files as JSON with --json', async () => {
    const dir = join(root, 'sweep');
    saveSweep(dir, fixtureSweep());
    const out = join(root, 'sweep-out');
    const r = await run(dir, '--out', out, '--json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as {
      kind: string;
      dir: string;
      charts: { name: string }[];
      csv: string[];
    };
    expect(json.kind).toBe('sweep');
    expect(json.dir).toBe(out);
    expect(json.charts.map((c) => c.name)).toEqual(['sweep']);
    expect(json.csv).toEqual([join(out, 'points.csv')]);
  });

  it('re-renders a cliff test', async () => {
    const dir = join(root, 'cliff');
    saveCliff(dir, { points: fixtureCliff() });
    const r = await run(dir, '--json');
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'cliff', dir: join(dir, 'report') });
  });

  it('exits 2 naming the files it looked for when DIR holds none of them', async () => {
    const dir = join(root, 'empty');
    mkdirSync(dir);
    const r = await run(dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `error: ${dir}: has no summary.json (a run), points.json (a sizing sweep) or cliff.json (a cliff test); nothing to report`,
    );
  });

  it('exits 2 when DIR does not exist or a saved file is malformed', async () => {
    expect((await run(join(root, 'missing'))).code).toBe(2);
    const dir = join(root, 'bad');
    saveSweep(dir, { ...fixtureSweep(), points: [] });
    const file = join(dir, 'points.json');
    const text = readFileSync(file, 'utf8').replace('"points": []', '"points": 3');
    writeFileSync(file, text);
    const r = await run(dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/points\.json: is not a sweep file \(points: /);
  });
});
