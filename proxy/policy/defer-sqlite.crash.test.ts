/**
 * The SQLite defer store under real crashes: a child process adds, claims and finishes items in a
 * loop and is killed with SIGKILL after a seeded number of acknowledged calls; the store is reopened
 * after each kill and checked against everything the child acknowledged.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import type { DeferState } from '../../gate/index.js';
import { SqliteDeferStore } from './defer-sqlite.js';

const CHILD = new URL('./defer-crash-child.ts', import.meta.url).pathname;
const ROUNDS = 8;
const SEED = 20261202;
const TERMINAL = new Set<DeferState>(['done', 'expired', 'cancelled']);

/** Runs the child until it has printed `killAfter` acknowledgements, then SIGKILLs it. */
function crashRound(
  file: string,
  round: number,
  killAfter: number,
): Promise<{ lines: string[]; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, String(SEED), String(round)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buf = '';
    let err = '';
    let killed = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`round ${round}: child gave ${lines.length} lines in 20 s; stderr ${err}`));
    }, 20_000);
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
      }
      if (!killed && lines.length >= killAfter + 1) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      // A partial last line (cut by the kill) is not an acknowledgement.
      resolve({ lines, signal });
    });
  });
}

describe('SqliteDeferStore under kill -9', () => {
  it('loses nothing acknowledged, lists nothing twice as pending and only moves states forward', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-defer-crash-')), 'defer.db');
    const rng = seedrandom(String(SEED));
    const acked = new Map<string, DeferState>(); // id → last acknowledged state
    let previous = new Map<string, DeferState>(); // id → state at the last reopen
    let recoveredTotal = 0;
    let killedMidLoop = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const killAfter = 5 + Math.floor(rng() * 200);
      const { lines, signal } = await crashRound(file, round, killAfter);
      expect(lines[0]).toMatch(/^READY \d+$/);
      if (signal === 'SIGKILL') killedMidLoop++;
      let lastAdd = -1;
      for (const line of lines.slice(1)) {
        const [op, id, state] = line.split(' ');
        if (op === 'A') {
          acked.set(id!, 'pending');
          lastAdd = Number(id!.split('-')[1]);
        } else if (op === 'C') acked.set(id!, 'draining');
        else if (op === 'F') acked.set(id!, state as DeferState);
      }
      const store = SqliteDeferStore.open(file);
      try {
        recoveredTotal += store.recovered;
        const now = new Map<string, DeferState>();
        for (const [id, want] of acked) {
          const rec = store.get(id);
          expect(rec, `acknowledged ${id} is in the store`).toBeDefined();
          const got = rec!.state;
          now.set(id, got);
          expect(got, `${id} is not draining after reopen`).not.toBe('draining');
          if (TERMINAL.has(want)) expect(got, `${id} keeps its acknowledged end`).toBe(want);
          const before = previous.get(id);
          if (before !== undefined && TERMINAL.has(before)) expect(got, `${id} stays ${before}`).toBe(before);
        }
        // At most one add the child committed but had no time to print: the one after its last line.
        const unacked = store.get(`r${round}-${lastAdd + 1}`);
        const beyond = store.get(`r${round}-${lastAdd + 2}`);
        if (beyond !== undefined) expect(acked.has(beyond.item.id), 'no phantom add').toBe(true);
        if (unacked !== undefined && !acked.has(unacked.item.id)) acked.set(unacked.item.id, unacked.state);
        // Nothing listed twice as pending; the backlog counts exactly the pending lists.
        const backlog = store.backlog();
        let listed = 0;
        const ids = new Set<string>();
        for (const cls of ['batch', 'eval']) {
          const p = store.pending(cls, 1_000_000);
          listed += p.length;
          for (const it of p) {
            expect(ids.has(it.id), `${it.id} listed once`).toBe(false);
            ids.add(it.id);
            expect(it.className).toBe(cls);
          }
          expect(p.length).toBe(backlog.get(cls) ?? 0);
        }
        expect(ids.size).toBe(listed);
        // Acknowledged-pending or recovered items are all in the pending lists.
        for (const [id, st] of now) if (st === 'pending') expect(ids.has(id), `${id} is listed`).toBe(true);
        // What the next round starts from: acknowledged claims are pending again.
        for (const [id, st] of now)
          if (acked.get(id) === 'draining' && st === 'pending') acked.set(id, 'pending');
        previous = now;
      } finally {
        store.close();
      }
    }
    // The test must have exercised what it claims: kills mid-loop, recovery of claimed items, ends.
    expect(killedMidLoop).toBe(ROUNDS);
    expect(recoveredTotal).toBeGreaterThan(0);
    expect([...acked.values()].filter((s) => TERMINAL.has(s)).length).toBeGreaterThan(10);
    expect(acked.size).toBeGreaterThan(100);
  }, 120_000);
});
