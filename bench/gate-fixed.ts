/**
 * One fixed run of a `bench:gate` workload, for instruction counts (no timing, no repeats):
 * `node --import tsx bench/gate-fixed.ts uncontended|queued PAIRS`. Under
 * `valgrind --tool=callgrind`, the difference between two pair counts is the cost of the
 * extra pairs alone (start-up, module loading and warm-up cancel out).
 */
import { queued, uncontended } from './gate-workloads.js';

const [which, pairsArg] = process.argv.slice(2);
const pairs = Number(pairsArg);
if (!Number.isInteger(pairs) || pairs <= 0)
  throw new Error(`PAIRS must be a positive integer, got ${pairsArg}`);
if (which === 'uncontended') uncontended(pairs);
else if (which === 'queued') queued(pairs);
else throw new Error(`workload must be uncontended or queued, got ${which}`);
