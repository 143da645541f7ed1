/**
 * The build that `sluice` runs when it is fresh (scripts/build.mjs, bin/sluice.js): when a build
 * counts as fresh, and that the bundled CLI and sweep worker give byte-identical outputs to the
 * TypeScript sources loaded through tsx.
 */
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBuild } from '../bin/fresh-build.js';
import { SLUICE_BIN } from '../cli/test/process.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';

const exec = promisify(execFile);

describe('freshBuild', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-fresh-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const at = (file: string, s: number): void => utimesSync(join(root, file), s, s);
  beforeAll(() => {
    mkdirSync(join(root, 'dist'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'a.ts'), '');
    writeFileSync(join(root, 'src', 'b.ts'), '');
    writeFileSync(join(root, 'dist', 'cli.js'), '');
    writeFileSync(
      join(root, 'dist', 'build-inputs.json'),
      JSON.stringify({ 'cli.js': ['src/a.ts', 'src/b.ts'], 'empty.js': [] }),
    );
  });

  it('is fresh when no input is newer than the bundle', () => {
    at('src/a.ts', 1000);
    at('src/b.ts', 2000);
    at('dist/cli.js', 2000);
    expect(freshBuild(root, 'cli.js')).toBe(true);
  });

  it('is stale when one input was changed after the build', () => {
    at('src/a.ts', 1000);
    at('src/b.ts', 2001);
    at('dist/cli.js', 2000);
    expect(freshBuild(root, 'cli.js')).toBe(false);
  });

  it('is stale when an input is gone, the bundle is missing, or it lists no inputs', () => {
    at('src/b.ts', 1000);
    at('dist/cli.js', 2000);
    expect(freshBuild(root, 'other.js')).toBe(false);
    expect(freshBuild(root, 'empty.js')).toBe(false);
    rmSync(join(root, 'src', 'a.ts'));
    expect(freshBuild(root, 'cli.js')).toBe(false);
    writeFileSync(join(root, 'src', 'a.ts'), '');
    at('src/a.ts', 1000);
    expect(freshBuild(root, 'cli.js')).toBe(true);
    rmSync(join(root, 'dist', 'build-inputs.json'));
    expect(freshBuild(root, 'cli.js')).toBe(false);
  });
});

/** Every file under `dir`, relative path → content. */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(relative(dir, p), readFileSync(p));
  }
  return out;
}

/**
 * Whether a bundle input is test code: a `*.test.ts` file or anything in a `test/` folder (where
 * the test helpers and fixtures live, beside the code they test or at the top).
 */
function isTestSource(path: string): boolean {
  return /\.test\.ts$/.test(path) || /(^|\/)test\//.test(path);
}

describe('isTestSource', () => {
  it.each([
    ['sim/engine/test/helpers.ts', true],
    ['cli/test/process.ts', true],
    ['test/import-graph.ts', true],
    ['gate/pool.test.ts', true],
    ['sim/engine/engine.ts', false],
    ['cli/main.ts', false],
    ['sim/run/stats.ts', false],
  ])('%s: %s', (path, expected) => {
    expect(isTestSource(path)).toBe(expected);
  });
});

describe('the bundled CLI', () => {
  // A build of its own inside the repository (so that the bundle finds the package root and
  // node_modules as dist/ does), leaving dist/ to whatever else runs now.
  mkdirSync(join(REPO_ROOT, 'out'), { recursive: true });
  const buildDir = mkdtempSync(join(REPO_ROOT, 'out', 'bundle-test-'));
  const work = mkdtempSync(join(tmpdir(), 'sluice-bundle-'));
  afterAll(() => {
    rmSync(buildDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  beforeAll(async () => {
    await exec(process.execPath, [
      join(REPO_ROOT, 'scripts', 'build.mjs'),
      '--outdir',
      relative(REPO_ROOT, buildDir),
    ]);
    writeFileSync(join(buildDir, 'run.js'), "import { main } from './cli.js';\nawait main(process.argv);\n");
  }, 60_000);

  /** Runs `sluice ARGS` from the test's bundle, as bin/sluice.js does from dist/. */
  const bundled = (args: string[]) => exec(process.execPath, [join(buildDir, 'run.js'), ...args]);
  /** Runs `sluice ARGS` from the sources through tsx. */
  const fromSource = (args: string[]) =>
    exec(process.execPath, [SLUICE_BIN, ...args], { env: { ...process.env, SLUICE_FROM_SOURCE: '1' } });

  it('writes the same run outputs, byte for byte, as the sources', async () => {
    const scenario = join(REPO_ROOT, 'scenarios', 'cancellations.yaml');
    const a = join(work, 'bundled');
    const b = join(work, 'source');
    const [ra, rb] = await Promise.all([
      bundled(['run', scenario, '--seed', '7', '--out', a, '--json']),
      fromSource(['run', scenario, '--seed', '7', '--out', b, '--json']),
    ]);
    expect(ra.stdout).toBe(rb.stdout);
    const fa = filesOf(a);
    const fb = filesOf(b);
    expect([...fa.keys()].sort()).toEqual([...fb.keys()].sort());
    expect(fa.size).toBeGreaterThan(2);
    for (const [name, bytes] of fa) expect(bytes.equals(fb.get(name)!), name).toBe(true);
  }, 60_000);

  it('carries no test code: no bundle is built from a test file or a test helper', () => {
    const inputs = JSON.parse(readFileSync(join(buildDir, 'build-inputs.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    expect(Object.keys(inputs).sort()).toEqual(['cli.js', 'sim.bench.js', 'worker.js']);
    for (const [bundle, files] of Object.entries(inputs)) {
      expect(files.length, bundle).toBeGreaterThan(100);
      expect(files.filter(isTestSource), bundle).toEqual([]);
    }
  });

  it('loads vega, vega-lite, resvg, undici, cli-table3 and the CSV libraries only where they are used', () => {
    const code = readFileSync(join(buildDir, 'cli.js'), 'utf8');
    const staticImports = [...code.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    for (const lazy of [
      'vega',
      'vega-lite',
      '@resvg/resvg-js',
      'undici',
      'cli-table3',
      'csv-parse/sync',
      'csv-stringify/sync',
    ]) {
      expect(staticImports, lazy).not.toContain(lazy);
    }
    // The chart libraries stay dynamic imports in the bundle, resolved from node_modules when a chart is drawn.
    for (const lazy of ['vega', 'vega-lite', '@resvg/resvg-js']) expect(code).toContain(`import("${lazy}")`);
  });

  it('runs a sweep on worker threads from the bundled worker', async () => {
    const scenario = join(REPO_ROOT, 'scenarios', 'spike.yaml');
    const args = [
      'size',
      scenario,
      '--vary',
      'fc_max_queue_depth=0,16',
      '--workers',
      '2',
      '--no-report',
      '--json',
    ];
    const [ra, rb] = await Promise.all([bundled(args), fromSource(args)]);
    const pa = JSON.parse(ra.stdout) as unknown;
    expect(pa).toEqual(JSON.parse(rb.stdout) as unknown);
  }, 120_000);
});
