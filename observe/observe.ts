/**
 * `sluice observe`: replays a recorded trace through the gate in observe mode
 * and reports what enforce would have done, with the same trace under
 * enforce beside it. Both runs stream the trace, so memory does not grow with
 * its length.
 */
import { join } from 'node:path';
import type { TraceFormatError } from '../sim/clients/errors.js';
import type { RunSummary } from '../sim/run/records.js';
import { runScenario } from '../sim/run/run.js';
import { FileSink, MemorySink, type RunSink } from '../sim/run/sinks.js';
import {
  OBSERVED_CEILINGS,
  ObserveCollector,
  type ObservedCeiling,
  type TenantObservation,
  type TimeBucket,
  type WouldCounts,
} from './collect.js';
import { type ObserveSetup, observeScenario } from './scenario.js';

/** The figures of one mode's run that the comparison shows. */
export interface ModeFigures {
  goodput_rps: number;
  goodput_share: number;
  throughput_rps: number;
  shed_rate: number;
  ttft_p95_ms: number;
  e2e_p95_ms: number;
  max_inflight: number;
}

/** The observe report (`observe.json`). */
export interface ObserveResult {
  trace: {
    file: string;
    format: string;
    speedup: number;
    requests: number;
    replay_s: number;
    bad_lines: number;
  };
  rule: Record<string, unknown>;
  /** Requests at least one ceiling would have refused at once / parked. */
  would_shed: number;
  would_queue: number;
  would_shed_share: number;
  /** Would-be refusals at each ceiling (a request over two ceilings counts at both). */
  per_ceiling: Record<ObservedCeiling, WouldCounts>;
  peak_inflight: number;
  /** fc_max_outstanding at which nothing, or at most each share, would have been shed (without a queue). */
  ceilings: { shed_share: number; max_outstanding: number }[];
  tenants: TenantObservation[];
  bucket_s: number;
  over_time: TimeBucket[];
  /** The same trace with the gate observing (nothing refused) and enforcing. */
  compare: { observe: ModeFigures; enforce: ModeFigures };
}

export interface ObserveOptions extends ObserveSetup {
  /** Shares of arrivals the ceiling table reports. */
  shedShares: number[];
  /** Write both runs' outputs (`observe/`, `enforce/`) here. */
  outDir?: string;
  /** Skip unreadable trace lines (counted) instead of failing. */
  skipBadLines: boolean;
}

function figures(s: RunSummary): ModeFigures {
  return {
    goodput_rps: s.goodput_rps,
    goodput_share: s.goodput_share,
    throughput_rps: s.throughput_rps,
    shed_rate: s.shed_rate,
    ttft_p95_ms: s.ttft_ms.p95,
    e2e_p95_ms: s.e2e_ms.p95,
    max_inflight: s.max_inflight,
  };
}

/** Runs the trace in observe mode, then in enforce mode, and gathers the report. */
export async function runObserve(o: ObserveOptions): Promise<ObserveResult> {
  const collector = new ObserveCollector();
  const badLines = new Set<number>();
  const onBad = o.skipBadLines ? (e: TraceFormatError) => badLines.add(e.line) : undefined;
  const sinkFor = (mode: string, ids: string[]): RunSink =>
    o.outDir === undefined ? new MemorySink(false) : new FileSink(join(o.outDir, mode), ids);

  const obsScenario = observeScenario(o, 'observe');
  const ids = obsScenario.endpoints.map((e) => e.id);
  const observed = await runScenario(obsScenario, {
    sink: sinkFor('observe', ids),
    observer: collector,
    untilIdle: true,
    ...(onBad ? { onBadTraceLine: onBad } : {}),
  });
  const enforced = await runScenario(observeScenario(o, 'enforce'), {
    sink: sinkFor('enforce', ids),
    untilIdle: true,
    ...(onBad ? { onBadTraceLine: () => {} } : {}),
  });
  if (collector.arrivals === 0) {
    throw new EmptyTraceError(o.trace);
  }
  const perCeiling = {} as Record<ObservedCeiling, WouldCounts>;
  for (const c of OBSERVED_CEILINGS) perCeiling[c] = { ...collector.perCeiling[c] };
  return {
    trace: {
      file: o.trace,
      format: o.format,
      speedup: o.speedup,
      requests: collector.arrivals,
      replay_s: observed.duration_s,
      bad_lines: badLines.size,
    },
    rule: o.rule.serviceArguments,
    would_shed: collector.wouldShed,
    would_queue: collector.wouldQueue,
    would_shed_share: Math.round((collector.wouldShed / collector.arrivals) * 1e6) / 1e6,
    per_ceiling: perCeiling,
    peak_inflight: collector.peakInflight,
    ceilings: [0, ...o.shedShares.filter((s) => s > 0)].map((share) => ({
      shed_share: share,
      max_outstanding: collector.ceilingForShare(share),
    })),
    tenants: collector.tenants(),
    bucket_s: collector.bucketS,
    over_time: collector.overTime(),
    compare: { observe: figures(observed), enforce: figures(enforced) },
  };
}

/** A trace with no inference request in it. */
export class EmptyTraceError extends Error {
  override readonly name = 'EmptyTraceError';
  constructor(readonly file: string) {
    super(`${file}: the trace has no inference request to replay`);
  }
}
