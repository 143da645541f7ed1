#!/usr/bin/env node
/**
 * Builds what `sluice` and `npm run bench:sim` run: one esbuild bundle per entry in `dist/`
 * (packages stay external, loaded from node_modules, except those in BUNDLED), plus `dist/build-inputs.json`, the
 * source files each bundle was made from, by which `bin/sluice.js` tells a fresh build from
 * a stale one. Runs at `npm install` / `npm ci` (the `prepare` script) and before the
 * benchmark. Without a fresh build, `sluice` loads the sources through tsx instead: the same
 * code, about a tenth slower in a long simulation (see BENCHMARKS.md).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { constNumbers } from './const-numbers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `--outdir DIR` (relative to the repository root) builds elsewhere, e.g. for a test. @default dist */
const at = process.argv.indexOf('--outdir');
const OUTDIR = at >= 0 ? process.argv[at + 1] : 'dist';
if (OUTDIR === undefined || OUTDIR === '') throw new Error('--outdir needs a directory');
const OUT = resolve(ROOT, OUTDIR);

/** Output name in dist/ → entry source. `worker.js` is what sweep/pool.ts starts beside the CLI. */
const ENTRIES = {
  cli: 'cli/main.ts',
  worker: 'sweep/worker-main.ts',
  'sim.bench': 'bench/sim.bench.ts',
};

/**
 * Packages bundled in rather than loaded from node_modules: zod's ESM entry is some fifty files
 * (its locales among them), and loading them one by one was the largest part of the start-up
 * left once vega, resvg and undici load on first use (BENCHMARKS.md, "Start-up"). Every other
 * package stays external.
 */
const BUNDLED = new Set(['zod']);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const EXTERNAL = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ENTRIES,
  outdir: OUT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  metafile: true,
  logLevel: 'warning',
});

// The top-level numeric constants that esbuild declared `var` are `const` again (const-numbers.mjs).
for (const out of Object.keys(result.metafile.outputs)) {
  if (!out.endsWith('.js')) continue;
  const file = resolve(ROOT, out);
  writeFileSync(file, constNumbers(readFileSync(file, 'utf8')).code);
}

const inputs = {};
for (const [out, meta] of Object.entries(result.metafile.outputs)) {
  if (meta.entryPoint === undefined) continue;
  inputs[relative(OUT, resolve(ROOT, out))] = Object.keys(meta.inputs).sort();
}
writeFileSync(join(OUT, 'build-inputs.json'), `${JSON.stringify(inputs, null, 2)}\n`);
process.stdout.write(`sluice: built ${Object.keys(inputs).join(', ')} in ${OUTDIR}/\n`);
