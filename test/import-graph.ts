/**
 * The house rules of the import graph, checked over source text (no compiler needed):
 *
 * 1. Outside `gate/`, the gate is reached only through `gate/index.ts`. One exception:
 *    `loadgen/shared/` (inlined into the k6 bundle, which must not carry the whole gate) may
 *    import `gate/decisions.ts`, a leaf module with the decision vocabulary.
 * 2. `gate/` code imports nothing outside itself, and no `node:` module (it is pure); its tests
 *    may use the shared test harness.
 * 3. `sim/` never imports a network module (`node:http`, `node:http2`, `node:https`, `node:net`,
 *    `node:tls`, `node:dgram`, `undici`).
 * 4. `reports/` never imports `proxy/`.
 * 5. `loadgen/` (what generates load) never imports `proxy/` or `reports/`, nor the jobs that
 *    drive it against the gate (`cliff/`, `fidelity/`).
 * 6. Nothing lower imports what stands above it: `sim/` imports no `proxy/`, `loadgen/`,
 *    `reports/`, job or `cli/`; `reports/` no `loadgen/`, job or `cli/`; `loadgen/` no other job
 *    (`sweep/`, `observe/`) or `cli/`; `proxy/` no `reports/`, `loadgen/`, job or `cli/`; no job
 *    imports `cli/` (docs/architecture.md draws these arrows). Tests may drive what stands above
 *    their folder.
 */
import { dirname, join, normalize } from 'node:path';

const JOBS = ['sweep', 'observe', 'cliff', 'fidelity'];
/** For a folder, the folders above it in the layering (rule 6). */
const ABOVE: Readonly<Record<string, ReadonlySet<string>>> = {
  sim: new Set(['proxy', 'loadgen', 'reports', 'cli', ...JOBS]),
  // (reports/ importing proxy/ and loadgen/ importing proxy/, reports/, cliff/ or fidelity/ are
  // rules 4 and 5.)
  reports: new Set(['loadgen', 'cli', ...JOBS]),
  loadgen: new Set(['cli', 'sweep', 'observe']),
  proxy: new Set(['reports', 'loadgen', 'cli', ...JOBS]),
  ...Object.fromEntries(JOBS.map((j) => [j, new Set(['cli'])])),
};

/** One broken rule: the importing file, what it imports, and which rule. */
export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

const NETWORK = new Set([
  'node:http',
  'node:http2',
  'node:https',
  'node:net',
  'node:tls',
  'node:dgram',
  'undici',
]);
/** What `loadgen/` never imports (rule 5). */
const LOADGEN_NEVER = new Set(['proxy', 'reports', 'cliff', 'fidelity']);
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** Module specifiers a source file imports (static, side-effect and dynamic imports). */
export function importsOf(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** Top folder of a repository-relative path (`gate`, `sim`, ...). */
const top = (p: string): string => p.split('/')[0]!;

/**
 * The violations among `files` (repository-relative path → source text).
 * @param files `.ts` sources, paths with `/` separators
 */
export function importViolations(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const folder = top(file);
    const isTest = /\.test\.ts$/.test(file);
    for (const spec of importsOf(source)) {
      const relative = spec.startsWith('.');
      const target = relative ? normalize(join(dirname(file), spec)).replaceAll('\\', '/') : spec;
      const targetTop = relative ? top(target) : null;
      if (folder === 'gate') {
        // The gate's own tests may use the shared test harness and node modules; its code may not.
        if (isTest) continue;
        if (relative && targetTop !== 'gate')
          out.push({ file, imports: spec, rule: 'gate imports nothing outside gate/' });
        if (!relative && spec.startsWith('node:'))
          out.push({ file, imports: spec, rule: 'gate imports no node: module' });
        continue;
      }
      if (relative && targetTop === 'gate' && target !== 'gate/index.js') {
        const k6Leaf = file.startsWith('loadgen/shared/') && target === 'gate/decisions.js';
        if (!k6Leaf) out.push({ file, imports: spec, rule: 'outside gate/, only gate/index.ts' });
      }
      if (folder === 'sim' && NETWORK.has(spec))
        out.push({ file, imports: spec, rule: 'sim imports no network module' });
      if (folder === 'reports' && relative && targetTop === 'proxy')
        out.push({ file, imports: spec, rule: 'reports never import proxy/' });
      if (folder === 'loadgen' && relative && LOADGEN_NEVER.has(targetTop ?? ''))
        out.push({ file, imports: spec, rule: 'loadgen imports no proxy/, reports/ or job' });
      const above = ABOVE[folder];
      // Tests may drive what stands above their folder (a job's test runs its command).
      if (above !== undefined && relative && !isTest && above.has(targetTop ?? ''))
        out.push({ file, imports: spec, rule: `${folder} imports nothing above it` });
    }
  }
  return out;
}
