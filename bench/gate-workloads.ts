/**
 * The gate benchmark's workloads, shared by `npm run bench:gate` (timed, median of runs) and
 * `bench/gate-fixed.ts` (one fixed run, for instruction counts under callgrind).
 */
import { performance } from 'node:perf_hooks';
import type { Permit } from '../gate/index.js';
import { Gate, ManualClock } from '../gate/index.js';

export const KEY = '192.0.2.10:8080/tcp';

export function rule(fc: Record<string, unknown>) {
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
export function uncontended(pairs: number): number {
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
export function queued(pairs: number): number {
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
