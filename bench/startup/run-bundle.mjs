#!/usr/bin/env node
// Runs a built CLI bundle directly: `node bench/startup/run-bundle.mjs DIST_DIR sluice-args...`.
// For the start-up benchmark in BENCHMARKS.md, to time two builds side by side.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, ...args] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: run-bundle.mjs DIST_DIR [sluice arguments]');
const { main } = await import(pathToFileURL(resolve(dir, 'cli.js')).href);
await main([process.argv[0], 'sluice', ...args]);
