/**
 * `sluice fidelity`: runs one scenario in the simulator and for real (the proxy in front of
 * emulated engines on loopback, driven by the open-loop driver) and compares goodput, refusals by
 * reason, TTFT p50/p95 and queue wait p95.
 *
 * Both runs offer the same requests: the scenario is shortened first (`durationScale`), the
 * simulator runs it, and the driver runs the same scenario compressed onto a clock `timeScale`
 * times faster (engines emulated at that time scale); the driver's schedule is drawn from the same
 * seeded streams, and {@link checkSchedule} verifies it request by request. Real figures are
 * brought back to engine time before comparing.
 */

import { startRealGate } from '../cliff/bench.js';
import { engineSpecs, startEngines } from '../cliff/engines.js';
import { compressScenario, shortenScenario, toEngineTime } from '../cliff/scale-scenario.js';
import { runLoad } from '../loadgen/driver/driver.js';
import { prepareLoad } from '../loadgen/driver/scenario.js';
import { MemoryDecisionLog } from '../proxy/decision-log.js';
import type { RunSummary } from '../sim/run/records.js';
import { runScenario } from '../sim/run/run.js';
import { MemorySink } from '../sim/run/sinks.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import {
  checkSchedule,
  loggedQueueWait,
  type Pair,
  pair,
  relDiff,
  type ScheduleCheck,
  shedsByReason,
  streamedTtft,
  totalSheds,
} from './compare.js';
import { type FidelityVerdict, fidelityVerdict, type TargetCheck, targetCheck } from './verdict.js';

export type { TargetCheck } from './verdict.js';

/** The targets of the issue, over steady-state scenarios. */
export const FIDELITY_TARGETS = { goodput: 0.05, sheds: 0.05, ttft_p95: 0.15 } as const;

/** Options of {@link runFidelity}. */
export interface FidelityOptions {
  /** Run this share of the scenario (rates kept). @default 1 */
  durationScale?: number;
  /** Engine ms per real ms of the real run (>= 0.05; below 1 is slow motion). @default 1 */
  timeScale?: number;
  /** Overrides the scenario's seed (both runs). */
  seed?: number;
  /** Real ms of throwaway load (other engines, another gate, another seed) run first, so the
   * measured run does not pay for a cold JIT. 0 turns it off. @default 1500 */
  primeMs?: number;
  /** Called with a line of progress. */
  progress?: (line: string) => void;
  /** The lateness bound of the real run (share of late sends). @default MAX_LATE_SHARE */
  maxLateShare?: number;
  /** Called every second of the real run with the seconds done and planned. */
  onRealSecond?: (done: number, total: number) => void;
}

/**
 * Runs `ms` of the prepared load against throwaway engines and gate: the first second of a fresh
 * process is slow (cold JIT), and engine steps are real timers, so that slowness would show as
 * engine time in the measured run (magnified by the time scale).
 */
async function prime(
  compressed: Scenario,
  specs: ReturnType<typeof engineSpecs>['specs'],
  o: { timeScale: number; seed: number; ms: number },
): Promise<void> {
  const prepared = await prepareLoad(compressed, { seed: o.seed + 1 });
  const engines = await startEngines(specs, { timeScale: o.timeScale, seed: o.seed + 1 });
  try {
    const gate = await startRealGate(compressed, engines, { engineTimeScale: o.timeScale });
    try {
      await runLoad({
        ...prepared,
        endMs: Math.min(prepared.endMs, o.ms),
        warmupMs: 0,
        target: gate.target,
        engineTimeScale: o.timeScale,
      });
      await gate.waitIdle(2000);
    } finally {
      await gate.close();
    }
  } finally {
    await Promise.all(engines.map((e) => e.close()));
  }
}

/** The comparison `sluice fidelity --json` prints. */
export interface FidelityResult {
  scenario: string;
  seed: number;
  duration_scale: number;
  time_scale: number;
  goodput_rel_diff: number | null;
  sheds_rel_diff: number | null;
  ttft_p50_rel_diff: number | null;
  ttft_p95_rel_diff: number | null;
  queue_wait_p95_rel_diff: number | null;
  /** Every compared figure, both sides (engine time). */
  figures: Record<string, Pair>;
  sheds_by_reason: Record<string, Pair>;
  targets: { goodput: TargetCheck; sheds: TargetCheck; ttft_p95: TargetCheck };
  schedule_check: ScheduleCheck;
  /** How well the real run kept up: driver schedule lag, engine step lag, proxy state after. */
  real_run: {
    wall_s: number;
    /** Attempts the driver sent. */
    sends: number;
    late_sends: number;
    schedule_lag_p99_ms: number;
    engine_lag_max_ms: number;
    transport_errors: Record<string, number>;
    inflight_after: number;
    queued_after: number;
    anomalies: number;
  };
  /** Met, missed, or invalid (the harness could not keep up: targets not judged). */
  verdict: FidelityVerdict;
  notes: string[];
  simulated: RunSummary;
  /** The real run's summary in engine time; its queue_wait_ms is from the proxy's decision log. */
  real: RunSummary;
}

/** Runs the comparison. */
export async function runFidelity(scenario: Scenario, o: FidelityOptions = {}): Promise<FidelityResult> {
  const ds = o.durationScale ?? 1;
  const ts = o.timeScale ?? 1;
  const seed = o.seed ?? scenario.seed;
  const say = o.progress ?? (() => {});
  const sc = shortenScenario(scenario, ds);
  sc.seed = seed;
  const notes: string[] = [];

  say(`simulating ${sc.name} (${sc.duration_s} s)`);
  const simSink = new MemorySink(true);
  // TTFT as a client sees it on both sides: the driver sees a non-streamed answer only whole.
  const simulated = await runScenario(sc, { seed, sink: simSink, clientTtft: true });

  // The proxy's gate runs on the engines' clock, as the simulated gate does.
  const comp = compressScenario(sc, ts, { gateOnEngineClock: true });
  notes.push(...comp.notes);
  const { specs, notes: engineNotes } = engineSpecs(sc);
  notes.push(...engineNotes);
  const prepared = await prepareLoad(comp.scenario, { seed });
  notes.push(...prepared.warnings);
  const primeMs = o.primeMs ?? 1500;
  if (primeMs > 0) {
    say(`priming (${primeMs} ms of throwaway load)`);
    await prime(comp.scenario, specs, { timeScale: ts, seed, ms: primeMs });
  }
  const engines = await startEngines(specs, { timeScale: ts, seed });
  const log = new MemoryDecisionLog();
  let realSink: MemorySink;
  let raw: Awaited<ReturnType<typeof runLoad>>;
  let after: { inflight: number; queued: number; anomalies: number };
  let epochStart: number;
  const startDelayMs = 100;
  const wall0 = performance.now();
  let engineLag = 0;
  try {
    const gate = await startRealGate(comp.scenario, engines, { decisionLog: log, engineTimeScale: ts });
    notes.push(...gate.warnings);
    try {
      say(`real run: ${specs.length} emulated engine(s) at time scale ${ts}, ${comp.scenario.duration_s} s`);
      realSink = new MemorySink(true);
      epochStart = Date.now() + startDelayMs;
      raw = await runLoad({
        ...prepared,
        target: gate.target,
        sink: realSink,
        startDelayMs,
        engineTimeScale: ts,
        ...(o.onRealSecond
          ? { onSecond: (t: number) => o.onRealSecond?.(t, Math.ceil(prepared.endMs / 1000)) }
          : {}),
      });
      after = await gate.waitIdle(5000);
    } finally {
      await gate.close();
    }
  } finally {
    engineLag = Math.max(0, ...engines.map((e) => e.load().lagMsMax));
    await Promise.all(engines.map((e) => e.close()));
  }
  const wallS = (performance.now() - wall0) / 1000;

  const real = toEngineTime(raw.summary, ts);
  real.queue_wait_ms = loggedQueueWait(
    log.records,
    epochStart + prepared.warmupMs,
    epochStart + prepared.endMs,
    {
      logMsPerRealMs: ts,
    },
  );
  const simTtftS = streamedTtft(simSink.requests, sc.warmup_s * 1000);
  const realTtftS = streamedTtft(realSink.requests, prepared.warmupMs, ts);
  const schedule = checkSchedule(simSink.requests, realSink.requests, ts, 0.002 * ts + 0.002);
  if (!schedule.equal)
    notes.push(
      `the real run did not offer exactly the simulated requests (${schedule.mismatch_count} differ): compare with care`,
    );
  if (simulated.offered > 0 && simulated.offered < 300)
    notes.push(
      `only ${simulated.offered} requests measured: a few requests move the shares by several percent`,
    );
  const nonStreamed = simSink.requests.filter((r) => r.inference && !r.stream).length;
  if (nonStreamed > 0)
    notes.push(
      `${nonStreamed} non-streamed requests: on both sides their TTFT is the time to the whole answer (what a client sees), also for the TTFT SLO; ttft_streamed_* compare streamed requests only`,
    );

  const figures: Record<string, Pair> = {
    goodput_rps: pair(simulated.goodput_rps, real.goodput_rps),
    throughput_rps: pair(simulated.throughput_rps, real.throughput_rps),
    goodput_share: pair(simulated.goodput_share, real.goodput_share),
    sheds: pair(totalSheds(simulated), totalSheds(real)),
    shed_rate: pair(simulated.shed_rate, real.shed_rate),
    ttft_p50_ms: pair(simulated.ttft_ms.p50, real.ttft_ms.p50),
    ttft_p95_ms: pair(simulated.ttft_ms.p95, real.ttft_ms.p95),
    ttft_streamed_p50_ms: pair(simTtftS.p50, realTtftS.p50),
    ttft_streamed_p95_ms: pair(simTtftS.p95, realTtftS.p95),
    queue_wait_p50_ms: pair(simulated.queue_wait_ms.p50, real.queue_wait_ms.p50),
    queue_wait_p95_ms: pair(simulated.queue_wait_ms.p95, real.queue_wait_ms.p95),
    queue_waits: pair(simulated.queue_wait_ms.count, real.queue_wait_ms.count),
    offered: pair(simulated.offered, real.offered),
  };
  const target = (t: number, d: number | null): TargetCheck => targetCheck(t, d);
  const goodputDiff = relDiff(real.goodput_rps, simulated.goodput_rps);
  const shedsDiff = relDiff(totalSheds(real), totalSheds(simulated));
  const ttftP95Diff = relDiff(real.ttft_ms.p95, simulated.ttft_ms.p95);
  const targets = {
    goodput: target(FIDELITY_TARGETS.goodput, goodputDiff),
    sheds: target(FIDELITY_TARGETS.sheds, shedsDiff),
    ttft_p95: target(FIDELITY_TARGETS.ttft_p95, ttftP95Diff),
  };
  const realRun = {
    wall_s: Math.round(wallS * 10) / 10,
    sends: raw.schedule.sends,
    late_sends: raw.schedule.late_sends,
    schedule_lag_p99_ms: raw.schedule.lag_p99_ms,
    engine_lag_max_ms: Math.round(engineLag * 10) / 10,
    transport_errors: raw.transport_errors,
    inflight_after: after.inflight,
    queued_after: after.queued,
    anomalies: after.anomalies,
  };
  const verdict = fidelityVerdict(
    { targets, real_run: realRun, schedule_check: schedule },
    o.maxLateShare === undefined ? {} : { maxLateShare: o.maxLateShare },
  );
  return {
    scenario: sc.name,
    seed,
    duration_scale: ds,
    time_scale: ts,
    goodput_rel_diff: goodputDiff,
    sheds_rel_diff: shedsDiff,
    ttft_p50_rel_diff: relDiff(real.ttft_ms.p50, simulated.ttft_ms.p50),
    ttft_p95_rel_diff: ttftP95Diff,
    queue_wait_p95_rel_diff: relDiff(real.queue_wait_ms.p95, simulated.queue_wait_ms.p95),
    figures,
    sheds_by_reason: shedsByReason(simulated, real),
    targets,
    schedule_check: schedule,
    real_run: realRun,
    verdict,
    notes,
    simulated,
    real,
  };
}
