/**
 * Runs a scenario: the gate core on the simulator's virtual clock, simulated
 * engines behind its endpoints, scrapes and health probes, the clients, and
 * the timeline. A run is a function of (scenario, seed): same inputs,
 * byte-identical outputs.
 *
 * Simulated time advances in chunks of CHUNK_MS; between chunks the run
 * awaits the output sinks and pulls the next stretch of a replayed trace, so
 * memory stays bounded by the live requests, not the run's length.
 *
 * This file wires the parts: the generated clients (feeds.ts), the trace
 * replay (trace-pull.ts), the per-second rows (second-rows.ts), the gate's
 * admission (admission.ts), the engines (engines.ts), the request lifecycle
 * (requests.ts) and the world's scrapes, probes and timeline (world.ts).
 */
import type { TraceFormatError } from '../clients/errors.js';

import type { RequestDescriptor } from '../clients/request-factory.js';
import { RequestFactory } from '../clients/request-factory.js';
import { createRetryPolicy } from '../clients/retry.js';
import type { RandomFn, RandomStreams } from '../clients/rng.js';
import { tokenShaper } from '../clients/schedule.js';
import { KEYLESS_LABEL } from '../clients/tenants.js';
import { uniformStream } from '../kernel/rng.js';
import { Simulator } from '../kernel/simulator.js';
import { toClientConfig } from '../scenario/client-config.js';
import type { Scenario } from '../scenario/resolve.js';
import { type Admission, buildAdmission } from './admission.js';
import { ClassStats } from './class-stats.js';
import { buildEngines, type EngineNode } from './engines.js';
import { FallbackPools } from './fallback-pools.js';
import { clientFeeds } from './feeds.js';
import { hasClassColumns, policySummary, SimPolicy } from './policy-admission.js';
import { PoolHealth } from './pool-health.js';
import type { RunSummary } from './records.js';
import { Lifecycle, type RunObserver } from './requests.js';
import { scheduleSecondRows } from './second-rows.js';
import type { RunSink } from './sinks.js';
import { RunStats, summarize } from './stats.js';
import { TracePull } from './trace-pull.js';
import { scheduleHealth, scheduleScrapes, scheduleTimeline } from './world.js';

/** Simulated time run between two awaits, ms. */
const CHUNK_MS = 10_000;
/** How far ahead of the clock a replayed trace is read, ms of virtual time. */
const TRACE_AHEAD_MS = 20_000;

export interface RunOptions {
  /** Overrides the scenario's seed. */
  seed?: number;
  sink: RunSink;
  /** Watches every new attempt's decision (observe reports). */
  observer?: RunObserver;
  /**
   * End as soon as a replayed trace is exhausted and every request has
   * finished (duration_s is then only the upper bound); the summary's
   * duration is the time actually run.
   */
  untilIdle?: boolean;
  /** Skip unreadable trace lines instead of failing, reporting each here. */
  onBadTraceLine?: (err: TraceFormatError) => void;
  /**
   * Let the vLLM engines plan uneventful steps ahead instead of dispatching each (the
   * outputs are the same; off only to check that). @default true
   */
  runAhead?: boolean;
  /**
   * Time the TTFT of a non-streamed request to its whole answer (its client sees nothing
   * earlier), for its record and for whether it met its TTFT SLO; by default it is the
   * engine's first token. `sluice fidelity` sets it: a load driver can only see the answer.
   * @default false
   */
  clientTtft?: boolean;
}

/** Runs `scenario` to its end and returns the summary (also handed to the sink). */
export async function runScenario(scenario: Scenario, opts: RunOptions): Promise<RunSummary> {
  const seed = opts.seed ?? scenario.seed;
  const sink = opts.sink;
  const endMs = scenario.duration_s * 1000;
  const warmupMs = scenario.warmup_s * 1000;
  const sim = new Simulator();
  const streams: RandomStreams = (name) => uniformStream(seed, name);
  const setup = toClientConfig(scenario);
  const factory = new RequestFactory(setup.workload, streams);
  const stats = new RunStats(warmupMs);

  // Forward references: the gate's host is the lifecycle, which needs the gate and the engines.
  let lifecycle: Lifecycle | null = null;
  const host = {
    granted: (t: Parameters<Lifecycle['granted']>[0], p: Parameters<Lifecycle['granted']>[1]) =>
      lifecycle!.granted(t, p),
    ended: (t: Parameters<Lifecycle['ended']>[0], r: Parameters<Lifecycle['ended']>[1]) =>
      lifecycle!.ended(t, r),
  };
  const admission: Admission = buildAdmission(scenario.gate, sim, host);
  // `gate.policy`: the policy decides first, on the same virtual clock (sim/run/policy-admission.ts),
  // told the pool's health (engines down, maintenance) by the timeline.
  const health = new PoolHealth(scenario.endpoints.length, () => policy?.healthChanged());
  // `gate.fallback_pools`: engines of their own, where the policy's pool degrades send requests.
  const fallback =
    scenario.fallbackPools === undefined
      ? undefined
      : new FallbackPools(
          sim,
          seed,
          scenario.fallbackPools,
          (node, out) => lifecycle!.onStep(node, out),
          opts.runAhead ?? true,
        );
  const policy =
    scenario.policy === undefined ? undefined : new SimPolicy(scenario.policy, sim, health, fallback);
  const classColumns = hasClassColumns(scenario);
  const classStats = classColumns
    ? new ClassStats(
        warmupMs,
        policy?.policy.classes.map((c) => c.name),
      )
    : null;
  const nodes: EngineNode[] = buildEngines(
    sim,
    seed,
    scenario.engines,
    scenario.endpoints,
    (node, out) => lifecycle!.onStep(node, out),
    opts.runAhead ?? true,
  );
  const mainBreaker = scheduleHealth(sim, scenario, nodes, admission);
  // A fallback engine is none of the main rule's endpoints: its results do not reach that breaker.
  const breaker =
    fallback === undefined
      ? mainBreaker
      : (node: EngineNode, ok: boolean) => {
          if (node.endpoint.index < nodes.length) mainBreaker(node, ok);
        };

  // The token shifts and the open-loop feeds are the schedule's (`sim/clients/schedule.ts`), the
  // ones the load driver and the k6 plan send: this run only places them on the clock.
  const shaped = tokenShaper(setup.shifts, streams('clients.shift'));
  const sendNew = (d: RequestDescriptor): void => {
    const req = shaped(d);
    if (req.inference) stats.offer(req.tenant ?? KEYLESS_LABEL, req.sentAtMs);
    lifecycle!.send(req);
  };
  const feeds = clientFeeds(sim, setup, factory, streams, endMs, sendNew);

  lifecycle = new Lifecycle({
    sim,
    admission,
    nodes,
    retry: createRetryPolicy(setup.retry),
    retryRng: streams('clients.retry'),
    nextAttempt: (prev, atMs) => factory.retry(prev, atMs),
    record: (r, itlGaps) => {
      stats.record(r, itlGaps);
      classStats?.record(r);
      sink.request(r);
    },
    logicalEnd: (d, now) => feeds.logicalEnd(d, now),
    endMs,
    onEndpointResult: breaker,
    ...(opts.observer === undefined ? {} : { observer: opts.observer }),
    ...(opts.clientTtft ? { clientTtft: true } : {}),
    ...(policy === undefined ? {} : { policy, defaultClass: policy.policy.document.envelope.default_class }),
    ...(classColumns ? { classColumns: true } : {}),
    ...(fallback === undefined ? {} : { fallbackPick: (pool: string) => fallback.pick(pool) }),
    onGaugeChange: () => {
      const p = admission.pool();
      if (policy === undefined) stats.observe(p.inflight, p.queue.length);
      else stats.observe(Math.max(p.inflight, policy.gate.leases), p.queue.length + policy.gate.waiting);
    },
  });
  policy?.attach(lifecycle);

  feeds.start();
  const trace = new TracePull(
    sim,
    setup.trace,
    endMs,
    (rec) => sendNew(factory.fromTrace(rec, sim.now())),
    seed,
    opts.onBadTraceLine,
  );
  scheduleScrapes(sim, seed, scenario, nodes, admission);
  scheduleTimeline(
    sim,
    scenario,
    nodes,
    admission,
    (node, lost) => lifecycle!.lost(node, lost),
    lifecycle.tools,
    policy?.store,
    health,
    policy?.dependencies,
    fallback,
  );
  const pool0 = admission.pool();
  const configured = {
    max_outstanding: pool0.cfg.maxOutstanding,
    queue_depth: pool0.cfg.queueDepth,
    queue_wait_ms: pool0.cfg.queueWaitMs,
  };
  scheduleSecondRows(sim, admission, nodes, stats, sink, policy?.gate);

  // ---- run ----------------------------------------------------------------------
  let ranMs = endMs;
  try {
    for (let t = 0; t < endMs; ) {
      const next = Math.min(endMs, t + CHUNK_MS);
      await trace.pull(next + TRACE_AHEAD_MS);
      sim.run(next);
      t = next;
      await sink.flush();
      if (opts.untilIdle && trace.done && t >= trace.horizonMs && lifecycle.liveCount === 0) {
        ranMs = t;
        break;
      }
    }
  } finally {
    // The trace file is closed whether the replay read it to the end or the run stopped first.
    await trace.close();
  }
  for (const n of nodes) n.host.settle();
  for (const n of fallback?.nodes ?? []) n.host.settle();
  lifecycle.finish();

  const summary = summarize(stats, {
    scenario: scenario.name,
    seed,
    dialect: admission.dialect,
    durationMs: ranMs,
    warmupMs,
    decisions: admission.decisions(),
    ceilings: configured,
    anomalies: { ...admission.anomalies },
    events: sim.eventCount,
  });
  if (classStats !== null) summary.classes = classStats.summary();
  if (policy !== undefined)
    summary.policy = policySummary(
      policy,
      summary.classes ?? [],
      scenario.timeline.some((e) => e.event === 'dependency_outage'),
    );
  await sink.close(summary);
  return summary;
}

export type { RandomFn };
