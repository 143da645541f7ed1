/**
 * The esbuild bundle of the k6 scripts: one ESM file per script with the shared modules (and the
 * simulator's pure client models they use) inlined, and the `k6` modules left as imports for k6 to
 * provide. `npm run bundle:k6` runs this file; the tests bundle through {@link bundleK6}, so the
 * settings live here only.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Root of the repository. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Bundles `loadgen/k6/<name>.ts` into `outfile` (default `dist/k6/<name>.js`). @returns esbuild's warnings */
export async function bundleK6(
  name = 'cliff',
  outfile?: string,
): Promise<{ outfile: string; warnings: string[] }> {
  const out = outfile ?? `${REPO_ROOT}dist/k6/${name}.js`;
  const res = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [`loadgen/k6/${name}.ts`],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2020',
    external: ['k6', 'k6/*'],
    outfile: out,
    logLevel: 'silent',
    legalComments: 'none',
  });
  return { outfile: out, warnings: res.warnings.map((w) => w.text) };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await bundleK6(process.argv[2] ?? 'cliff');
  process.stdout.write(`${r.outfile}\n`);
}
