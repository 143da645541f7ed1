/**
 * A pure transform of a stream of trace records for replay: the spreading of quantised
 * timestamps (`trace.spread_quantised_ms`; time compression is `schedule.ts`'s). It streams (sync
 * or async input) and keeps at most one timestamp group in memory.
 */
import { requirePositive } from './errors.js';
import type { RandomFn } from './rng.js';
import type { TraceRecord } from './trace-parse.js';

/**
 * Spreads records that share a quantised timestamp over the bucket that follows it: the k records
 * stamped t get times t + bucketMs · U(1..k), the sorted values of k uniform draws (the arrival
 * times of a Poisson process given k arrivals in the bucket). File order is kept. k RNG draws per group.
 * The Mooncake conversation trace is quantised to about 3000 ms.
 */
export async function* spreadQuantised(
  records: AsyncIterable<TraceRecord> | Iterable<TraceRecord>,
  bucketMs: number,
  rng: RandomFn,
): AsyncGenerator<TraceRecord> {
  requirePositive('trace.bucketMs', bucketMs);
  let group: TraceRecord[] = [];
  const flush = function* (): Generator<TraceRecord> {
    const offsets = group.map(() => rng() * bucketMs).sort((a, b) => a - b);
    for (let i = 0; i < group.length; i += 1) {
      const r = group[i] as TraceRecord;
      yield { ...r, atMs: r.atMs + (offsets[i] ?? 0) };
    }
    group = [];
  };
  for await (const r of records) {
    if (group.length > 0 && r.atMs !== group[0]?.atMs) yield* flush();
    group.push(r);
  }
  yield* flush();
}
