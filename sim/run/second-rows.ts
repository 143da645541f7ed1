/**
 * The run's per-second rows: each simulated second, the gate's pool (in flight, queued, limits,
 * adaptive state), the decisions taken in that second, and each engine's running, waiting and KV
 * cache use, folded into the stats' row for that second and handed to the sink.
 */
import type { Simulator } from '../kernel/simulator.js';
import type { Admission } from './admission.js';
import type { EngineNode } from './engines.js';
import { round3 } from './histogram.js';
import type { SecondRow } from './records.js';
import type { RunSink } from './sinks.js';
import type { RunStats } from './stats.js';

/** Schedules one row per simulated second, the first at 1 s. */
export function scheduleSecondRows(
  sim: Simulator,
  admission: Admission,
  nodes: readonly EngineNode[],
  stats: RunStats,
  sink: RunSink,
): void {
  let lastDecisions = admission.decisions();
  sim.every(1000, () => {
    const p = admission.pool();
    const now = admission.decisions();
    const delta: Record<string, number> = {};
    for (const k of Object.keys(now) as (keyof typeof now)[]) delta[k] = now[k] - lastDecisions[k];
    lastDecisions = now;
    const row: SecondRow = stats.second(Math.round(sim.now() / 1000), {
      inflight: p.inflight,
      queued: p.queue.length,
      limit: p.bucket ? p.bucket.capacity : p.effective,
      configured_limit: p.bucket ? p.bucket.capacity : p.cfg.maxOutstanding,
      queue_depth: p.cfg.queueDepth,
      adapt_state: p.adaptState,
      decisions: delta,
      endpoints: nodes.map((n) => {
        n.host.sync();
        return {
          id: n.endpoint.id,
          running: n.engine.numRunning,
          waiting: n.engine.numWaiting,
          kv_usage: round3(n.engine.kvCacheUsage),
        };
      }),
    });
    sink.second(row);
  });
}
