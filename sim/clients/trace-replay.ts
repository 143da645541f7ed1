/**
 * Pure transforms of a stream of trace records for replay: time compression and the spreading of
 * quantised timestamps. Both stream (sync or async input) and keep at most one timestamp group in memory.
 */
import { requirePositive } from './errors.js';
import type { RandomFn } from './rng.js';
import type { TraceRecord } from './trace-parse.js';

/** Options of {@link scaleTrace}. */
export interface ScaleTraceOptions {
  /** Time compression: 2 replays the trace twice as fast. Default 1. */
  speedup?: number;
  /** Virtual time of the first record, ms. Default 0. */
  startMs?: number;
}

/** Records with `atMs` mapped to `startMs + atMs / speedup`. */
export async function* scaleTrace(
  records: AsyncIterable<TraceRecord> | Iterable<TraceRecord>,
  options: ScaleTraceOptions = {},
): AsyncGenerator<TraceRecord> {
  const speedup = requirePositive('trace.speedup', options.speedup ?? 1);
  const startMs = options.startMs ?? 0;
  for await (const r of records) yield { ...r, atMs: startMs + r.atMs / speedup };
}

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
