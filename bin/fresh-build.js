// Whether dist/ holds a build of the current sources (see scripts/build.mjs).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * True when `dist/<name>` exists under `root` and none of the source files it was built from
 * (listed in `dist/build-inputs.json`) is missing or newer than it.
 * @param {string} root the repository root
 * @param {string} name the bundle's file name in dist/, e.g. `cli.js`
 * @returns {boolean}
 */
export function freshBuild(root, name) {
  try {
    const inputs = JSON.parse(readFileSync(join(root, 'dist', 'build-inputs.json'), 'utf8'))[name];
    if (!Array.isArray(inputs) || inputs.length === 0) return false;
    const builtMs = statSync(join(root, 'dist', name)).mtimeMs;
    return inputs.every((file) => statSync(join(root, file)).mtimeMs <= builtMs);
  } catch {
    return false;
  }
}
