/**
 * Test child of `defer-sqlite.crash.test.ts`: adds, claims and finishes deferred items in a
 * seeded, bounded loop on one SQLite defer store, printing a line after each call returns
 * (`A id`, `C id`, `F id state`), until the parent kills it with SIGKILL. Lines on a pipe are
 * written synchronously on Linux, so a printed line means the call had returned.
 * argv: DB_FILE SEED ROUND
 */
import seedrandom from 'seedrandom';
import { SqliteDeferStore } from './defer-sqlite.js';

const [file, seedArg, roundArg] = process.argv.slice(2);
if (file === undefined || seedArg === undefined || roundArg === undefined) {
  process.stderr.write('usage: defer-crash-child DB_FILE SEED ROUND\n');
  process.exit(2);
}
const rng = seedrandom(`${seedArg}/${roundArg}`);
const store = SqliteDeferStore.open(file);
const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
out(`READY ${store.recovered}`);
const CLASSES = ['batch', 'eval'] as const;
const TERMINAL = ['done', 'expired', 'cancelled'] as const;
const claimed: string[] = [];
// Bounded: the parent kills it long before this, and it stops by itself if the parent does not.
for (let n = 0; n < 20_000; n++) {
  const r = rng();
  const cls = CLASSES[Math.floor(rng() * CLASSES.length)]!;
  if (r < 0.45) {
    const id = `r${roundArg}-${n}`;
    store.add({
      id,
      className: cls,
      tenant: `t${Math.floor(rng() * 3)}`,
      deferredAtMs: Date.now(),
      deadlineMs: Date.now() + 60_000,
      seats: 3,
      idempotencyKey: `k-${id}`,
      payload: new TextEncoder().encode(JSON.stringify({ id, pad: 'x'.repeat(Math.floor(rng() * 2000)) })),
    });
    out(`A ${id}`);
  } else if (r < 0.75) {
    const p = store.pending(cls, 4);
    const it = p[Math.floor(rng() * p.length)];
    if (it !== undefined && store.claim(it.id, Date.now())) {
      claimed.push(it.id);
      out(`C ${it.id}`);
    }
  } else {
    // Finish a claimed item, or now and then a pending one (cancel before drain).
    const fromClaimed = claimed.length > 0 && rng() < 0.8;
    const id = fromClaimed
      ? claimed.splice(Math.floor(rng() * claimed.length), 1)[0]!
      : store.pending(cls, 1)[0]?.id;
    if (id === undefined) continue;
    const state = TERMINAL[Math.floor(rng() * TERMINAL.length)]!;
    if (store.finish(id, state, Date.now(), state === 'done' ? 200 : undefined)) out(`F ${id} ${state}`);
  }
}
store.close();
out('END');
