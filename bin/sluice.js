#!/usr/bin/env node
// Entry point of the `sluice` command. Runs the bundle in dist/ (built at `npm install`, see
// scripts/build.mjs) while it is a build of the current sources; otherwise, or with
// SLUICE_FROM_SOURCE=1, loads the TypeScript sources through tsx. Same code either way; the
// bundle starts faster and runs long simulations about a tenth faster.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshBuild } from './fresh-build.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundled =
  process.env.SLUICE_FROM_SOURCE !== '1' && freshBuild(root, 'cli.js') && freshBuild(root, 'worker.js');
let main;
if (bundled) {
  ({ main } = await import('../dist/cli.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
await main(process.argv);
