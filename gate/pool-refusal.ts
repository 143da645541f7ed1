/**
 * A pool's refusal: the reason's status and Retry-After, with the pool's own
 * counts on the admission headers. The limit quoted is the ceiling that
 * refused: the per-endpoint one in force for `endpoint`, else the service one.
 */
import type { Clock } from './clock.js';
import { type Ceiling, type DecisionReason, makeRefusal, type Refusal } from './decisions.js';
import type { Pool } from './pool.js';
import { roleCapInForce } from './pool-ceilings.js';

/**
 * The refusal `pool` answers for `reason`.
 * @param bodyBuffered whether the request body was fully read (decides keep-alive)
 * @param queuedMs how long it waited (ms), for the refusals that end a wait
 * @param queueBound the tenant's queue share refused it (Retry-After from the mean wait)
 */
export function poolRefusal(
  pool: Pool,
  clock: Clock,
  reason: DecisionReason,
  bodyBuffered: boolean,
  ceiling: Ceiling,
  queuedMs?: number,
  queueBound = false,
): Refusal {
  const limit = ceiling === 'endpoint' ? roleCapInForce(pool, 'normal', clock.now()) : pool.effective;
  return makeRefusal(
    reason,
    { inflight: pool.inflight, queued: pool.queue.length, limit },
    pool.meanQueueWaitMs,
    bodyBuffered,
    ceiling,
    queuedMs,
    queueBound,
  );
}
