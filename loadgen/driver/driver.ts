/**
 * The open-loop load driver. Requests leave at their scheduled times: a timer is set for the next
 * due time and, when it fires, every request due by then is sent at once (a late timer sends a
 * batch, it never skips or delays the rest). Latency (TTFT, e2e) is measured from the SCHEDULED
 * send time, so a stall anywhere (the target, the network, this process) shows in the latency
 * rather than thinning the offered load: no coordinated omission. Each send's lag behind its
 * schedule is reported. Retries follow the scenario's policy (Retry-After plus the body's jitter
 * hint), deadlines abort the request, and the outputs are the simulator's records, time series
 * and summary.
 */

import { DECISION_REASONS } from '../../gate/index.js';
import { createRetryPolicy, type RetryContext } from '../../sim/clients/retry.js';
import {
  createSchedule,
  type LoadSetup,
  type RequestDescriptor,
  type Schedule,
} from '../../sim/clients/schedule.js';
import { KEYLESS_LABEL } from '../../sim/clients/tenants.js';
import type { TraceRecord } from '../../sim/clients/trace-parse.js';
import { seededStreams } from '../../sim/kernel/seeded-streams.js';
import { LatencyHistogram } from '../../sim/run/histogram.js';
import type { RunSummary } from '../../sim/run/records.js';
import { MemorySink, type RunSink } from '../../sim/run/sinks.js';
import { gapsFromMs, percentiles, RunStats, summarize } from '../../sim/run/stats.js';
import { classifyAttempt, decisionReasonOf } from '../shared/goodput.js';
import { buildRequest, type PayloadOptions } from '../shared/payload.js';
import { emptyStreamFacts } from '../shared/sse.js';
import { type AttemptHandle, type AttemptResult, startAttempt } from './attempt.js';
import { LagMeter, type ScheduleReport } from './lag.js';
import { toRecord } from './record.js';
import { createTransport, type Transport } from './transport.js';

/** Options of {@link runLoad}. */
export interface LoadOptions {
  /** Base URL of the target (`http://host:port`). */
  target: string;
  setup: LoadSetup;
  seed: number;
  /** Run length and warm-up, ms (already scaled). */
  endMs: number;
  warmupMs: number;
  /** For the summary. */
  scenario: string;
  dialect: 'loxilb' | 'smg';
  ceilings: RunSummary['ceilings'];
  traceRecords?: readonly TraceRecord[];
  payload?: PayloadOptions;
  /** Outputs; default kept in memory and dropped. */
  sink?: RunSink;
  /** After the end, let attempts in flight go on this long before they are recorded in_system. Default 0. */
  graceMs?: number;
  /** Attempts in flight at most; more fail with `driver_overload`. Default 10000. */
  maxInflight?: number;
  /** Delay before the schedule's time 0, ms. Default 50. */
  startDelayMs?: number;
  /** Called once a second with the row just closed (progress). */
  onSecond?: (tS: number, inflight: number) => void;
  /**
   * The target's gate counts engine time, this many ms per real ms (a proxy run with
   * `timeScale` in front of engines emulated at that scale). Retry delays are then engine
   * time too (the gate's Retry-After and jitter hint, and the retry policy's own delays,
   * which the scenario keeps uncompressed) and are divided by it. @default 1
   */
  engineTimeScale?: number;
}

/** The outputs of a run. */
export interface LoadResult {
  summary: RunSummary;
  schedule: ScheduleReport;
  /** Inter-token gaps over every completed stream, ms, warm-up included (the summary's `itl_ms` leaves it out). */
  itl_ms: ReturnType<typeof percentiles>;
  /** Attempts sent per protocol. */
  protocols: { http1: number; h2: number };
  /** Transport errors by message. */
  transport_errors: Record<string, number>;
}

/**
 * The requests a load run sends, in order: the simulator's open-loop schedule for the run's
 * setup, seed, end and trace records (`sim/clients/schedule.ts`).
 */
export function loadSchedule(o: Pick<LoadOptions, 'setup' | 'seed' | 'endMs' | 'traceRecords'>): Schedule {
  return createSchedule(o.setup, {
    seed: o.seed,
    endMs: o.endMs,
    ...(o.traceRecords ? { traceRecords: o.traceRecords } : {}),
  });
}

/** Runs the load and returns its summary (also handed to the sink). */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const sink = o.sink ?? new MemorySink(false);
  const transport: Transport = createTransport(o.target);
  const endMs = o.endMs;
  const stats = new RunStats(o.warmupMs);
  const lag = new LagMeter();
  const itl = new LatencyHistogram();
  const retryPolicy = createRetryPolicy(o.setup.retry);
  const retryRng = seededStreams(o.seed)('clients.retry');
  const schedule = loadSchedule(o);
  const maxInflight = o.maxInflight ?? 10_000;
  const decisionsTotal: Record<string, number> = Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));
  let decisionsSec: Record<string, number> = Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));
  const gauges = { inflight: 0, queued: 0, limit: 0 };
  const protocols = { http1: 0, h2: 0 };
  const transportErrors: Record<string, number> = {};
  let overload = 0;
  let sends = 0;

  const t0 = performance.now() + (o.startDelayMs ?? 50);
  const clock = (): number => performance.now() - t0;
  const live = new Set<AttemptHandle>();
  const retryTimers = new Set<NodeJS.Timeout>();
  let stopped = false;

  /** Records an ended attempt; returns its outcome. */
  const record = (d: RequestDescriptor, r: AttemptResult, inSystem: boolean): string => {
    const verdict = inSystem
      ? { outcome: 'in_system' as const, good: false }
      : classifyAttempt({
          inference: d.inference,
          status: r.status,
          error: r.refusal?.error ?? '',
          clientLeft: r.end === 'deadline',
          finished: r.finished,
          generatedTokens: r.generated,
          expectedTokens: d.outputTokens,
          finishReason: r.facts.finishReason,
          ttftFromFirstSendMs:
            r.facts.firstTokenAtMs === undefined ? undefined : r.facts.firstTokenAtMs - d.firstSentAtMs,
          endAtMs: r.endAtMs,
          deadlineAtMs: d.deadlineMs,
          ttftSloMs: d.ttftSloMs,
        });
    const rec = toRecord(d, r, verdict.outcome, verdict.good);
    if (rec.outcome === 'in_system') rec.e2e_ms = '';
    // The gaps between the SSE events that carried text, as the client read them (see RunSummary.itl_ms).
    stats.record(rec, verdict.outcome === 'completed' ? gapsFromMs(r.facts.gapsMs) : undefined);
    sink.request(rec);
    if (verdict.outcome === 'completed') for (const g of r.facts.gapsMs) itl.add(g);
    if (r.end === 'error') transportErrors[r.error] = (transportErrors[r.error] ?? 0) + 1;
    const reason =
      r.end === 'response' ? decisionReasonOf(r.status, r.refusal?.error ?? '', d.inference) : undefined;
    if (reason !== undefined) {
      decisionsTotal[reason] = (decisionsTotal[reason] ?? 0) + 1;
      decisionsSec[reason] = (decisionsSec[reason] ?? 0) + 1;
    }
    const gz = r.gauges;
    if (gz.inflight !== undefined) gauges.inflight = gz.inflight;
    if (gz.queued !== undefined) gauges.queued = gz.queued;
    if (gz.limit !== undefined) gauges.limit = gz.limit;
    if (gz.inflight !== undefined || gz.queued !== undefined) stats.observe(gauges.inflight, gauges.queued);
    return verdict.outcome;
  };

  const retryAfter = (d: RequestDescriptor, r: AttemptResult, outcome: string): void => {
    if (stopped || outcome === 'completed' || outcome === 'cancelled' || outcome === 'in_system') return;
    const ref = r.refusal;
    const ctx: RetryContext = {
      attempt: d.attempt,
      status: r.end === 'error' ? 0 : r.status,
      ...(ref?.retryAfterSec === undefined ? {} : { retryAfterSec: ref.retryAfterSec }),
      ...(ref?.jitterHintMs === undefined ? {} : { jitterHintMs: ref.jitterHintMs }),
    };
    const delay = retryPolicy(ctx, retryRng);
    if (delay === undefined) return;
    const at = r.endAtMs + delay / (o.engineTimeScale ?? 1);
    if (at >= endMs || (d.deadlineMs !== undefined && at >= d.deadlineMs)) return;
    const timer = setTimeout(
      () => {
        retryTimers.delete(timer);
        if (!stopped) send(schedule.retry(d, at));
      },
      Math.max(0, at - clock()),
    );
    retryTimers.add(timer);
  };

  const send = (d: RequestDescriptor): void => {
    sends++;
    lag.add(clock() - d.sentAtMs);
    protocols[d.protocol]++;
    if (live.size >= maxInflight) {
      overload++;
      const now = clock();
      record(d, failedResult(now, 'driver_overload'), false);
      return;
    }
    const spec = buildRequest(
      {
        tenant: d.tenant,
        promptTokens: d.promptTokens,
        outputTokens: d.outputTokens,
        stream: d.stream,
        inference: d.inference,
        id: d.id,
      },
      o.setup.apiKeys,
      o.payload,
    );
    const h = startAttempt(transport, spec, d.protocol, d.stream, d.deadlineMs, clock);
    live.add(h);
    void h.done.then((r) => {
      live.delete(h);
      const outcome = record(d, r, r.end === 'stopped');
      retryAfter(d, r, outcome);
    });
  };

  // ---- the schedule: one timer for the next due time, batches when late --------
  let next = schedule.next();
  let schedTimer: NodeJS.Timeout | undefined;
  let scheduleDone!: () => void;
  const scheduleOver = new Promise<void>((r) => {
    scheduleDone = r;
  });
  const tick = (): void => {
    schedTimer = undefined;
    const now = clock();
    while (next !== undefined && next.sentAtMs <= now) {
      const d = next;
      next = schedule.next();
      if (d.inference) stats.offer(d.tenant ?? KEYLESS_LABEL, d.sentAtMs);
      send(d);
    }
    if (next === undefined || stopped) {
      scheduleDone();
      return;
    }
    schedTimer = setTimeout(tick, Math.max(0, next.sentAtMs - clock()));
  };

  // ---- the per-second rows -------------------------------------------------------
  const seconds = Math.ceil(endMs / 1000);
  let sec = 0;
  let secTimer: NodeJS.Timeout | undefined;
  const closeSecond = (): void => {
    sec++;
    sink.second(
      stats.second(sec, {
        inflight: gauges.inflight,
        queued: gauges.queued,
        limit: gauges.limit,
        configured_limit: o.ceilings.max_outstanding,
        queue_depth: o.ceilings.queue_depth,
        adapt_state: '',
        decisions: decisionsSec,
        endpoints: [],
      }),
    );
    decisionsSec = Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));
    o.onSecond?.(sec, live.size);
    void sink.flush();
    if (sec < seconds) secTimer = setTimeout(closeSecond, Math.max(0, (sec + 1) * 1000 - clock()));
  };

  const sleepUntil = (t: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, t - clock())));

  schedTimer = setTimeout(tick, Math.max(0, (next?.sentAtMs ?? 0) - clock()));
  secTimer = setTimeout(closeSecond, Math.max(0, 1000 - clock()));
  try {
    await scheduleOver;
    await sleepUntil(endMs);
    stopped = true;
    for (const t of retryTimers) clearTimeout(t);
    retryTimers.clear();
    // The last rows close on their timers; wait for them.
    while (sec < seconds) await sleepUntil((sec + 1) * 1000 + 1);
    const grace = o.graceMs ?? 0;
    if (grace > 0 && live.size > 0) {
      const deadline = clock() + grace;
      while (live.size > 0 && clock() < deadline) await sleepUntil(Math.min(deadline, clock() + 20));
    }
    const pending = [...live].map((h) => h.done);
    for (const h of [...live]) h.stop();
    await Promise.all(pending);
  } finally {
    stopped = true;
    if (schedTimer !== undefined) clearTimeout(schedTimer);
    if (secTimer !== undefined) clearTimeout(secTimer);
    for (const t of retryTimers) clearTimeout(t);
    await transport.close();
  }

  const sched = lag.report();
  const summary = summarize(stats, {
    scenario: o.scenario,
    seed: o.seed,
    dialect: o.dialect,
    durationMs: o.endMs,
    warmupMs: o.warmupMs,
    decisions: decisionsTotal,
    ceilings: o.ceilings,
    anomalies: {
      late_sends: sched.late_sends,
      schedule_lag_p99_ms: sched.lag_p99_ms,
      schedule_lag_max_ms: sched.lag_max_ms,
      transport_errors: Object.values(transportErrors).reduce((a, b) => a + b, 0),
      driver_overload: overload,
    },
    events: sends,
  });
  await sink.close(summary);
  return {
    summary,
    schedule: sched,
    itl_ms: percentiles(itl),
    protocols,
    transport_errors: transportErrors,
  };
}

function failedResult(now: number, error: string): AttemptResult {
  return {
    end: 'error',
    status: 0,
    headers: {},
    headAtMs: undefined,
    endAtMs: now,
    facts: emptyStreamFacts(),
    generated: 0,
    finished: false,
    refusal: undefined,
    gauges: { inflight: undefined, queued: undefined, limit: undefined },
    error,
  };
}
