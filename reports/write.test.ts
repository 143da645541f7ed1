import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCliffReport } from './cliff-report.js';
import { parseCsv } from './csv.js';
import { writeRunReport } from './run-report.js';
import { writeSweepReport } from './sweep-report.js';
import { fixtureCliff, fixtureSweep, writeFixtureRun } from './test/fixtures.js';
import type { ReportFiles } from './types.js';

let root: string;
let runDir: string;
let files: ReportFiles;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sluice-report-'));
  runDir = join(root, 'run');
  writeFixtureRun(runDir, 30);
  files = await writeRunReport(runDir, { pngScale: 1 });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('run report', () => {
  it('writes every chart as .vl.json, .svg and .png, the CSV, report.html and report.md into <run>/report', () => {
    expect(files.dir).toBe(join(runDir, 'report'));
    expect(files.charts.map((c) => c.name)).toEqual([
      'goodput',
      'ceiling',
      'decisions',
      'latency',
      'tenants',
    ]);
    expect(readdirSync(files.dir).sort()).toEqual(
      [
        ...['goodput', 'ceiling', 'decisions', 'latency', 'tenants'].flatMap((n) => [
          `${n}.vl.json`,
          `${n}.svg`,
          `${n}.png`,
        ]),
        'report.html',
        'report.md',
        'tenants.csv',
      ].sort(),
    );
    const spec = JSON.parse(readFileSync(join(files.dir, 'tenants.vl.json'), 'utf8')) as {
      title: { text: string };
    };
    expect(spec.title.text).toBe('Goodput share per tenant');
  });

  it('exports the tenants as CSV with names that contain commas and quotes intact', () => {
    const rows = parseCsv(readFileSync(join(files.dir, 'tenants.csv'), 'utf8'));
    expect(rows[0]).toEqual(['tenant', 'offered', 'completed', 'good', 'goodput_rps', 'good_share']);
    expect(rows[1]).toEqual(['acme, inc.', '600', '420', '400', '7.27', '0.667']);
  });

  it('writes a Markdown summary whose images all exist beside it', () => {
    const md = readFileSync(files.markdown, 'utf8');
    const images = [...md.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1] ?? '');
    expect(images).toEqual(['goodput.png', 'ceiling.png', 'decisions.png', 'latency.png', 'tenants.png']);
    for (const img of images) expect(existsSync(join(files.dir, img))).toBe(true);
    expect(md).toContain('| goodput | 11.27 rps (62.0% of offered requests good) |');
  });

  it('writes byte-identical files when run twice', async () => {
    const again = await writeRunReport(runDir, { outDir: join(root, 'again'), pngScale: 1 });
    for (const name of readdirSync(files.dir)) {
      const a = readFileSync(join(files.dir, name));
      const b = readFileSync(join(again.dir, name));
      expect(a.equals(b), name).toBe(true);
    }
  });

  it('still reports a run without timeseries.csv, saying what is left out', async () => {
    const dir = join(root, 'no-ts');
    writeFixtureRun(dir, 5);
    rmSync(join(dir, 'timeseries.csv'));
    const out = await writeRunReport(dir, { pngScale: 1 });
    expect(out.charts.map((c) => c.name)).toEqual(['tenants']);
    expect(readFileSync(out.markdown, 'utf8')).toContain('This run has no timeseries.csv');
  });
});

describe('sweep and cliff reports', () => {
  it('writes the sweep heatmap, the ranked points CSV and the rule', async () => {
    const out = await writeSweepReport(join(root, 'sweep'), fixtureSweep(), { pngScale: 1 });
    expect(out.charts.map((c) => c.name)).toEqual(['sweep']);
    const csv = parseCsv(readFileSync(join(out.dir, 'points.csv'), 'utf8'));
    expect(csv[0]).toEqual([
      'rank',
      'fc_max_outstanding',
      'fc_max_queue_depth',
      'goodput_rps',
      'ci_low',
      'ci_high',
      'feasible',
      'binding',
      'shed_rate',
      'ttft_p95_ms',
    ]);
    expect(csv[1]?.slice(0, 4)).toEqual(['1', '32', '16', '36']);
    expect(csv.at(-1)?.[6]).toBe('false');
    const md = readFileSync(out.markdown, 'utf8');
    expect(md).toContain('"fc_max_outstanding": 32');
    expect(md.indexOf('## Recommendation')).toBeLessThan(md.indexOf('## Goodput across the sweep'));
  });

  it('writes the cliff chart and its CSV', async () => {
    const out = await writeCliffReport(
      join(root, 'cliff'),
      { points: fixtureCliff(), scenario: 'ramp' },
      { pngScale: 1 },
    );
    expect(out.charts.map((c) => c.name)).toEqual(['cliff']);
    const csv = parseCsv(readFileSync(join(out.dir, 'cliff.csv'), 'utf8'));
    expect(csv.length).toBe(13);
    expect(csv[1]).toEqual(['off', '10', '9.8', '10', '0', '600']);
    expect(readFileSync(out.html, 'utf8')).toContain('<title>Sluice cliff test: ramp</title>');
  });
});
