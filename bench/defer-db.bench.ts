/**
 * The price of `synchronous=FULL` in the SQLite defer store (proxy/policy/defer-sqlite.ts): time
 * per add (the call a 202 waits for) and per claim+finish, FULL against NORMAL, rounds interleaved
 * A/B/A/B on fresh files in the temp directory, medians of the rounds.
 *   npm run bench:defer-db
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDeferStore } from '../proxy/policy/defer-sqlite.js';
import { median } from './proxy/measure.js';

const ITEMS = 300;
const ROUNDS = 5;
const payload = new Uint8Array(2048).fill(120);

function round(mode: 'FULL' | 'NORMAL'): { addUs: number; finishUs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-defer-bench-'));
  const s = SqliteDeferStore.open(join(dir, 'd.db'), { synchronous: mode });
  try {
    let t = performance.now();
    for (let i = 0; i < ITEMS; i++)
      s.add({
        id: `i${i}`,
        className: 'batch',
        tenant: 't',
        deferredAtMs: i,
        deadlineMs: 1e12,
        seats: 3,
        payload,
      });
    const addUs = ((performance.now() - t) * 1000) / ITEMS;
    t = performance.now();
    for (let i = 0; i < ITEMS; i++) {
      s.claim(`i${i}`, i);
      s.finish(`i${i}`, 'done', i, 200);
    }
    const finishUs = ((performance.now() - t) * 1000) / ITEMS;
    return { addUs, finishUs };
  } finally {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const r: Record<'FULL' | 'NORMAL', { addUs: number[]; finishUs: number[] }> = {
  FULL: { addUs: [], finishUs: [] },
  NORMAL: { addUs: [], finishUs: [] },
};
for (let k = 0; k < ROUNDS; k++)
  for (const mode of ['FULL', 'NORMAL'] as const) {
    const x = round(mode);
    r[mode].addUs.push(x.addUs);
    r[mode].finishUs.push(x.finishUs);
  }
const f = (m: 'FULL' | 'NORMAL', k: 'addUs' | 'finishUs'): number => median(r[m][k]);
console.log(`defer store on ${tmpdir()}, ${ITEMS} items x ${ROUNDS} rounds each, medians (µs per call)`);
console.log(
  `  add            FULL ${f('FULL', 'addUs').toFixed(0)}  NORMAL ${f('NORMAL', 'addUs').toFixed(0)}  ratio ${(f('FULL', 'addUs') / f('NORMAL', 'addUs')).toFixed(2)}`,
);
console.log(
  `  claim+finish   FULL ${f('FULL', 'finishUs').toFixed(0)}  NORMAL ${f('NORMAL', 'finishUs').toFixed(0)}  ratio ${(f('FULL', 'finishUs') / f('NORMAL', 'finishUs')).toFixed(2)}`,
);
