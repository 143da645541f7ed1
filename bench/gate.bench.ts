/**
 * `npm run bench:gate [-- --json]`: admit+release pairs per second on an
 * uncontended pool and on a pool with a full queue and 64 active tenants
 * (median of several runs, one thread), and bytes of gate state per waiting
 * request (heap difference after a forced GC).
 */
import { Gate, ManualClock } from '../gate/index.js';
import { KEY, queued, rule, uncontended } from './gate-workloads.js';
import { median } from './proxy/measure.js';

const RUNS = 7;

/** Heap bytes per waiting request: a queue of 65536 waiters from 64 tenants. */
function bytesPerWaiter(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const N = 65_536;
  const gate = new Gate({ clock: new ManualClock() });
  gate.apply(
    rule({
      fc_mode: 'enforce',
      fc_max_outstanding: 1,
      fc_max_queue_depth: N,
      fc_max_queue_wait_ms: 3_600_000,
    }),
  );
  const reqs = Array.from({ length: 64 }, (_, i) => ({ tenant: `tenant-${i}` }));
  gate.admit(KEY, reqs[0]!);
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < N; i++) gate.admit(KEY, reqs[i % 64]!);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (gate.pool(KEY)!.queue.length !== N) throw new Error('queue not full');
  return (after - before) / N;
}

function main(): void {
  const json = process.argv.includes('--json');
  uncontended(200_000);
  queued(50_000);
  const u: number[] = [];
  const q: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    u.push(uncontended(2_000_000));
    q.push(queued(500_000));
  }
  const bytes = bytesPerWaiter();
  const out = {
    uncontended_pairs_per_s: Math.round(median(u)),
    queued_pairs_per_s: Math.round(median(q)),
    bytes_per_waiter: Math.round(bytes),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  const fmt = (x: number) => x.toLocaleString('en-US');
  process.stdout.write(
    [
      `gate benchmark (node ${process.version}, one thread, median of ${RUNS} runs)`,
      `  uncontended admit+release:           ${fmt(out.uncontended_pairs_per_s)} pairs/s`,
      `  full queue, 64 tenants, share 5%:    ${fmt(out.queued_pairs_per_s)} pairs/s`,
      `  gate state per waiting request:      ${out.bytes_per_waiter} bytes`,
      '',
    ].join('\n'),
  );
}

main();
