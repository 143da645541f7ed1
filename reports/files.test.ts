import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  detectOutput,
  ReportInputError,
  readCliffFile,
  readRunDir,
  readSweepFile,
  saveCliff,
  saveSweep,
} from './files.js';
import { fixtureCliff, fixtureSummary, fixtureSweep, writeFixtureRun } from './test/fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'sluice-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('saved outputs', () => {
  it('tells a run, a sweep and a cliff directory apart, and nothing from an empty one', () => {
    const run = join(root, 'run');
    writeFixtureRun(run, 3);
    const sweep = join(root, 'sweep');
    saveSweep(sweep, fixtureSweep());
    const cliff = join(root, 'cliff');
    saveCliff(cliff, { points: fixtureCliff() });
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect([detectOutput(run), detectOutput(sweep), detectOutput(cliff), detectOutput(empty)]).toEqual([
      'run',
      'sweep',
      'cliff',
      null,
    ]);
  });

  it('reads back a saved sweep and cliff test unchanged', () => {
    const dir = join(root, 'roundtrip');
    saveSweep(dir, fixtureSweep());
    saveCliff(dir, { points: fixtureCliff(), notes: ['n'] });
    expect(readSweepFile(join(dir, 'points.json'))).toEqual(fixtureSweep());
    expect(readCliffFile(join(dir, 'cliff.json'))).toEqual({ points: fixtureCliff(), notes: ['n'] });
  });

  it('names the file and the field of a malformed sweep', () => {
    const file = join(root, 'bad-points.json');
    writeFileSync(
      file,
      JSON.stringify({
        kind: 'sluice.sweep/v1',
        varied: [],
        slo: [],
        points: [{ params: {} }],
        recommendation: {},
      }),
    );
    expect(() => readSweepFile(file)).toThrow(ReportInputError);
    expect(() => readSweepFile(file)).toThrow(
      /bad-points\.json: is not a sweep file \(points\.0\.goodput_rps: /,
    );
  });

  it('names a file that is not JSON', () => {
    const file = join(root, 'cliff.json');
    writeFileSync(file, '{nope');
    expect(() => readCliffFile(file)).toThrow(/cliff\.json: is not valid JSON/);
  });

  it('rejects a summary.json that is not a run summary, naming the field', () => {
    const dir = join(root, 'bad-run');
    mkdirSync(dir);
    const { tenants: _t, ...rest } = fixtureSummary();
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(rest));
    expect(() => readRunDir(dir)).toThrow(/summary\.json: is not a run summary \(tenants: /);
  });

  it('names timeseries.csv when it cannot be read', () => {
    const dir = join(root, 'bad-ts');
    writeFixtureRun(dir, 3);
    writeFileSync(join(dir, 'timeseries.csv'), 't_s\n0\n');
    expect(() => readRunDir(dir)).toThrow(/timeseries\.csv: line 1: no column "inflight"/);
  });
});
