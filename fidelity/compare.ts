/**
 * The comparison of a simulated run with a real one: signed relative differences
 * ((real - simulated) / simulated), refusals by reason, TTFT over streamed requests only, the
 * queue wait the proxy logged, and the check that both runs offered the same requests.
 */
import type { DecisionRecord } from '../proxy/decision-log.js';
import { LatencyHistogram } from '../sim/run/histogram.js';
import type { Percentiles, RequestRecord, RunSummary } from '../sim/run/records.js';
import { percentiles } from '../sim/run/stats.js';

/**
 * (real - simulated) / simulated, rounded to 4 places. When the simulated value is 0 the ratio is
 * undefined: 0 when the real value is 0 too, otherwise null (see the absolute difference).
 */
export function relDiff(real: number, simulated: number): number | null {
  if (simulated === 0) return real === 0 ? 0 : null;
  return Math.round(((real - simulated) / simulated) * 10_000) / 10_000;
}

/** A figure on both sides. */
export interface Pair {
  simulated: number;
  real: number;
  rel_diff: number | null;
  abs_diff: number;
}

/** Both values of a figure and their differences. */
export function pair(simulated: number, real: number): Pair {
  return {
    simulated,
    real,
    rel_diff: relDiff(real, simulated),
    abs_diff: Math.round((real - simulated) * 1000) / 1000,
  };
}

/** Every refusal the clients saw (`sheds` by `status error`), summed. */
export function totalSheds(s: RunSummary): number {
  return Object.values(s.sheds).reduce((a, b) => a + b, 0);
}

/** Refusals by `status error` on both sides (the union of reasons). */
export function shedsByReason(sim: RunSummary, real: RunSummary): Record<string, Pair> {
  const keys = [...new Set([...Object.keys(sim.sheds), ...Object.keys(real.sheds)])].sort();
  return Object.fromEntries(keys.map((k) => [k, pair(sim.sheds[k] ?? 0, real.sheds[k] ?? 0)]));
}

/**
 * TTFT of completed, streamed inference attempts sent after the warm-up. Non-streamed answers are
 * left out: the simulator times their engine's first token, the driver only sees the whole answer.
 * `scale` multiplies real times back to engine time.
 */
export function streamedTtft(records: readonly RequestRecord[], warmupMs: number, scale = 1): Percentiles {
  const h = new LatencyHistogram();
  for (const r of records) {
    if (r.outcome !== 'completed' || !r.stream || !r.inference || r.sent_ms < warmupMs || r.ttft_ms === '')
      continue;
    h.add(r.ttft_ms * scale);
  }
  return percentiles(h);
}

/**
 * Queue wait of gated inference requests that waited, from the proxy's decision log: arrivals at or
 * after `fromEpochMs` (the end of the warm-up) whose exchange ended by `untilEpochMs` (the end of
 * the run: later ones are the simulator's `in_system`). The log's durations are in its gate's
 * clock: `logMsPerRealMs` of them per real ms (that clock's time scale, 1 for a real-time gate);
 * the result is in engine time, `engineMsPerLogMs` engine ms per log ms.
 */
export function loggedQueueWait(
  log: readonly DecisionRecord[],
  fromEpochMs: number,
  untilEpochMs: number,
  o: { engineMsPerLogMs?: number; logMsPerRealMs?: number } = {},
): Percentiles {
  const toEngine = o.engineMsPerLogMs ?? 1;
  const toReal = 1 / (o.logMsPerRealMs ?? 1);
  const h = new LatencyHistogram();
  for (const r of log) {
    if (r.queued_ms === null || r.decision === 'bypass') continue;
    const at = Date.parse(r.time);
    if (at < fromEpochMs || at + r.duration_ms * toReal > untilEpochMs) continue;
    h.add(r.queued_ms * toEngine);
  }
  return percentiles(h);
}

/** The result of comparing the offered requests of both runs. */
export interface ScheduleCheck {
  /** Logical requests (first attempts) in each run. */
  simulated: number;
  real: number;
  /** Logical ids whose tenant, tokens, stream flag, protocol or send time differ (first few). */
  mismatches: number[];
  mismatch_count: number;
  /** Largest |real send time (engine ms) - simulated send time| over matched requests. */
  max_send_diff_ms: number;
  /** Same count and no mismatch. */
  equal: boolean;
}

/**
 * Checks that the driver sent the requests the simulator drew: per logical request, the same
 * tenant, token counts, stream flag and protocol, and the same scheduled send time (real times
 * times `scale`, within `toleranceMs`, for the ms rounding of scaled times).
 */
export function checkSchedule(
  sim: readonly RequestRecord[],
  real: readonly RequestRecord[],
  scale = 1,
  toleranceMs = 0.01,
): ScheduleCheck {
  const first = (rs: readonly RequestRecord[]) => {
    const m = new Map<number, RequestRecord>();
    for (const r of rs) if (r.attempt === 1) m.set(r.logical_id, r);
    return m;
  };
  const a = first(sim);
  const b = first(real);
  const mismatches: number[] = [];
  let count = 0;
  let maxDiff = 0;
  for (const [id, s] of a) {
    const r = b.get(id);
    const diff = r ? Math.abs(r.sent_ms * scale - s.sent_ms) : Number.POSITIVE_INFINITY;
    const same =
      r !== undefined &&
      r.tenant === s.tenant &&
      r.prompt_tokens === s.prompt_tokens &&
      r.output_tokens === s.output_tokens &&
      r.stream === s.stream &&
      r.protocol === s.protocol &&
      r.inference === s.inference &&
      diff <= toleranceMs;
    if (r) maxDiff = Math.max(maxDiff, diff);
    if (!same) {
      count++;
      if (mismatches.length < 5) mismatches.push(id);
    }
  }
  for (const id of b.keys()) {
    if (a.has(id)) continue;
    count++;
    if (mismatches.length < 5) mismatches.push(id);
  }
  return {
    simulated: a.size,
    real: b.size,
    mismatches,
    mismatch_count: count,
    max_send_diff_ms: Math.round(maxDiff * 1000) / 1000,
    equal: count === 0 && a.size === b.size,
  };
}
