/**
 * `npm run bench:gate [-- --json]`: admit+release pairs per second on an
 * uncontended pool and on a pool with a full queue and 64 active tenants
 * (median of several runs, one thread), and bytes of gate state per waiting
 * request (heap difference after a forced GC).
 */
import { performance } from 'node:perf_hooks';
import type { Permit } from '../gate/index.js';
import { Gate, ManualClock } from '../gate/index.js';
import { median } from './proxy/measure.js';

const KEY = '192.0.2.10:8080/tcp';
const RUNS = 7;

function rule(fc: Record<string, unknown>) {
  return {
    serviceArguments: {
      externalIP: '192.0.2.10',
      port: 8080,
      protocol: 'tcp',
      mode: 4,
      sse_mode: true,
      ...fc,
    },
    endpoints: [
      { endpointIP: '198.51.100.11', targetPort: 8000, weight: 1 },
      { endpointIP: '198.51.100.12', targetPort: 8000, weight: 1 },
    ],
  };
}

/** Pairs/s of admit then release on a pool far from its ceiling. */
function uncontended(pairs: number): number {
  const gate = new Gate({ clock: new ManualClock() });
  gate.apply(
    rule({ fc_mode: 'enforce', fc_max_outstanding: 1000, fc_ep_max_inflight: 600, fc_max_queue_depth: 64 }),
  );
  const req = { tenant: undefined };
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const d = gate.admit(KEY, req);
    if (d.kind !== 'admit') throw new Error('expected admit');
    d.permit.release();
  }
  return pairs / ((performance.now() - t0) / 1000);
}

/**
 * Pairs/s on a pool at its ceiling with a full queue of 64 tenants under a
 * share: each pair is one release (which hands the unit to the oldest
 * eligible waiter) and one new arrival (which joins the queue).
 */
function queued(pairs: number): number {
  const CEIL = 256;
  const DEPTH = 1024;
  const TENANTS = Array.from({ length: 64 }, (_, i) => ({ tenant: `tenant-${i}` }));
  const running: Permit[] = [];
  const gate = new Gate({
    clock: new ManualClock(),
    host: {
      granted: (_t, p) => {
        running.push(p);
        return 'taken';
      },
      ended: () => {},
    },
  });
  gate.apply(
    rule({
      fc_mode: 'enforce',
      fc_max_outstanding: CEIL,
      fc_max_queue_depth: DEPTH,
      fc_max_queue_wait_ms: 3_600_000,
      fc_tenant_max_share_pct: 5,
    }),
  );
  let n = 0;
  while (running.length < CEIL) {
    const d = gate.admit(KEY, TENANTS[n++ % 64]!);
    if (d.kind === 'admit') running.push(d.permit);
  }
  while (gate.pool(KEY)!.queue.length < DEPTH) gate.admit(KEY, TENANTS[n++ % 64]!);
  const pool = gate.pool(KEY)!;
  let head = 0;
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    running[head++]!.release();
    const d = gate.admit(KEY, TENANTS[n++ % 64]!);
    if (d.kind !== 'queued') throw new Error(`expected queued, got ${d.kind}`);
    if (head > 1_000_000) {
      running.splice(0, head);
      head = 0;
    }
  }
  const dt = (performance.now() - t0) / 1000;
  if (pool.queue.length !== DEPTH || pool.tenants.active !== 64)
    throw new Error('the pool left its steady state');
  return pairs / dt;
}

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
