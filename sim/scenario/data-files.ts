/**
 * Where a scenario's data files are looked for: the repository root, the places a relative path
 * is tried in order, and `${VAR}` expansion in file paths. Nothing outside the repository is
 * looked at except what the caller names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest directory at or above `dir` that holds Sluice's package.json. This module runs both
 * from its source (sim/scenario/) and bundled into dist/, so the root is found, not assumed.
 */
export function findRepoRoot(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    const pkg = resolvePath(d, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'sluice') {
      return d;
    }
    if (dirname(d) === d) throw new Error(`no package.json of sluice at or above ${dir}`);
  }
}

/** Root of the repository. */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * The places a relative data file is looked up, in order: beside the scenario file, in the working
 * directory, then `data/<basename>` of the repository (the public traces Sluice ships). Nothing
 * outside the repository is ever looked at.
 */
export function dataFileCandidates(file: string, scenarioFile: string, cwd: string): string[] {
  if (isAbsolute(file)) return [file];
  const base = file.split(/[\\/]/).pop() ?? file;
  return [
    resolvePath(dirname(resolvePath(cwd, scenarioFile)), file),
    resolvePath(cwd, file),
    resolvePath(REPO_ROOT, 'data', base),
  ];
}

/** `${NAME}` replaced from `env`; the names that are unset are returned instead. */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): { value: string; missing: string[] } {
  const missing: string[] = [];
  const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined || v === '') {
      missing.push(name);
      return '';
    }
    return v;
  });
  return { value, missing };
}
