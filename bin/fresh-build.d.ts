/**
 * True when `dist/<name>` exists under `root` and none of the source files it was built from
 * (listed in `dist/build-inputs.json`) is missing or newer than it.
 * @param root the repository root
 * @param name the bundle's file name in dist/, e.g. `cli.js`
 */
export function freshBuild(root: string, name: string): boolean;
