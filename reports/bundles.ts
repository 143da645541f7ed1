/**
 * The browser bundles of vega, vega-lite and vega-embed, read from
 * node_modules so the HTML report can inline them and open offline.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One inlined library. */
export interface Bundle {
  name: string;
  version: string;
  /** The minified UMD source. */
  code: string;
}

/** The libraries in load order (vega-lite and vega-embed need vega). */
export const BUNDLE_PACKAGES = ['vega', 'vega-lite', 'vega-embed'] as const;

let cache: Bundle[] | undefined;

/** Finds a package's directory from its resolved entry point (its package.json is not exported). */
function packageDir(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve(name));
  for (;;) {
    const pkgFile = join(dir, 'package.json');
    if (existsSync(pkgFile)) {
      const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { name?: string };
      if (pkg.name === name) return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package directory of ${name}`);
    dir = up;
  }
}

/** Reads one bundle: the file its package.json names as `unpkg` (the minified browser build). */
function readBundle(name: string): Bundle {
  const dir = packageDir(name);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    version: string;
    unpkg?: string;
    jsdelivr?: string;
  };
  const file = pkg.unpkg ?? pkg.jsdelivr;
  if (!file) throw new Error(`${name} names no browser bundle (unpkg) in its package.json`);
  return { name, version: pkg.version, code: readFileSync(join(dir, file), 'utf8') };
}

/** The three bundles (read once per process). */
export function loadBundles(): Bundle[] {
  cache ??= BUNDLE_PACKAGES.map(readBundle);
  return cache;
}
