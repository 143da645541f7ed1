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

import { createRetryPolicy, type RetryContext } from '../../sim/clients/retry.js';
import {
  createSchedule,
  type LoadSetup,
  type RequestDescriptor,
  type Schedule,
} from '../../sim/clients/schedule.js';
import type { TraceRecord } from '../../sim/clients/trace-parse.js';
import { seededStreams } from '../../sim/kernel/seeded-streams.js';
import type { RunSummary } from '../../sim/run/records.js';
import { MemorySink, type RunSink } from '../../sim/run/sinks.js';
import { percentiles } from '../../sim/run/stats.js';
import { buildRequest, type PayloadOptions } from '../shared/payload.js';
import { emptyStreamFacts } from '../shared/sse.js';
import { type AttemptHandle, type AttemptResult, startAttempt } from './attempt.js';
import { DEFER_POLL_MS, deferredLocation, followDeferred } from './deferred.js';
import { type LoadEnvelope, withEnvelope } from './envelope.js';
import { LagMeter, type ScheduleReport } from './lag.js';
import { paceSchedule, tickSeconds } from './pacer.js';
import { LoadTally } from './tally.js';
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
  /**
   * The scenario's policy envelope to send (envelope.ts): each request's JWT of its tenant and
   * class, deadline and idempotency headers and route. Undefined: the requests are built as
   * without a policy, byte for byte.
   */
  envelope?: LoadEnvelope;
  /**
   * Between two polls of a deferred request's status URL, ms (with an envelope only: a 202 with
   * a `Location` is followed to its end, deferred.ts). @default 500
   */
  deferPollMs?: number;
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
  /** Deferred answers (202 + Location) the driver followed to their status URL's end. */
  deferred_followed: number;
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

/**
 * Runs the load and returns its summary (also handed to the sink). The parts: the schedule paced
 * in real time (pacer.ts), each attempt sent and retried here, what came back tallied into
 * records, rows and the summary (tally.ts).
 */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const sink = o.sink ?? new MemorySink(false);
  const transport: Transport = createTransport(o.target);
  const endMs = o.endMs;
  const pol = o.envelope?.policy;
  const tally = new LoadTally(
    o.warmupMs,
    sink,
    o.ceilings,
    pol === undefined || o.envelope === undefined ? undefined : { policy: pol, rules: o.envelope.rules },
  );
  const lag = new LagMeter();
  const retryPolicy = createRetryPolicy(o.setup.retry);
  const retryRng = seededStreams(o.seed)('clients.retry');
  const schedule = loadSchedule(o);
  const maxInflight = o.maxInflight ?? 10_000;
  const protocols = { http1: 0, h2: 0 };
  let overload = 0;
  let sends = 0;
  let deferred = 0;

  const t0 = performance.now() + (o.startDelayMs ?? 50);
  const clock = (): number => performance.now() - t0;
  const live = new Set<AttemptHandle>();
  const retryTimers = new Set<NodeJS.Timeout>();
  let stopped = false;
  /** Every attempt in flight is being stopped: a 202 now is recorded in_system, not followed. */
  let closing = false;

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
      tally.record(d, failedResult(now, 'driver_overload'), false);
      return;
    }
    const built = buildRequest(
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
    const spec = o.envelope === undefined ? built : withEnvelope(built, d, clock(), o.envelope);
    const h = startAttempt(transport, spec, d.protocol, d.stream, d.deadlineMs, clock);
    live.add(h);
    void h.done.then((r) => {
      live.delete(h);
      // A deferred answer (202 + Location) is not the end: follow it, as its client would.
      const location = o.envelope !== undefined && d.inference ? deferredLocation(r) : undefined;
      if (location !== undefined && closing) {
        // The run is over: the item may still be done later, but not within this run.
        tally.record(d, r, true, { path: spec.path, deferred: true });
        return;
      }
      if (location !== undefined) {
        const f = followDeferred(
          transport,
          r,
          location,
          spec,
          d.protocol,
          d.deadlineMs,
          clock,
          o.deferPollMs ?? DEFER_POLL_MS,
        );
        live.add(f);
        deferred++;
        void f.done.then((fr) => {
          live.delete(f);
          const outcome = tally.record(d, fr, fr.end === 'stopped', { path: spec.path, deferred: true });
          retryAfter(d, fr, outcome);
        });
        return;
      }
      const outcome = tally.record(d, r, r.end === 'stopped', { path: spec.path, deferred: false });
      retryAfter(d, r, outcome);
    });
  };

  const sleepUntil = (t: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, t - clock())));

  const pacer = paceSchedule(
    schedule,
    clock,
    (d) => {
      tally.offer(d);
      send(d);
    },
    () => stopped,
  );
  const seconds = Math.ceil(endMs / 1000);
  const ticker = tickSeconds(seconds, clock, (sec) => {
    tally.closeSecond(sec);
    o.onSecond?.(sec, live.size);
    void sink.flush();
  });
  try {
    await pacer.over;
    await sleepUntil(endMs);
    stopped = true;
    for (const t of retryTimers) clearTimeout(t);
    retryTimers.clear();
    // The last rows close on their timers; wait for them.
    while (ticker.closed < seconds) await sleepUntil((ticker.closed + 1) * 1000 + 1);
    const grace = o.graceMs ?? 0;
    if (grace > 0 && live.size > 0) {
      const deadline = clock() + grace;
      while (live.size > 0 && clock() < deadline) await sleepUntil(Math.min(deadline, clock() + 20));
    }
    closing = true;
    const pending = [...live].map((h) => h.done);
    for (const h of [...live]) h.stop();
    await Promise.all(pending);
  } finally {
    stopped = true;
    pacer.cancel();
    ticker.cancel();
    for (const t of retryTimers) clearTimeout(t);
    await transport.close();
  }

  const sched = lag.report();
  const summary = tally.summarize({
    scenario: o.scenario,
    seed: o.seed,
    dialect: o.dialect,
    durationMs: o.endMs,
    warmupMs: o.warmupMs,
    anomalies: {
      late_sends: sched.late_sends,
      schedule_lag_p99_ms: sched.lag_p99_ms,
      schedule_lag_max_ms: sched.lag_max_ms,
      transport_errors: Object.values(tally.transportErrors).reduce((a, b) => a + b, 0),
      driver_overload: overload,
    },
    events: sends,
  });
  await sink.close(summary);
  return {
    summary,
    schedule: sched,
    itl_ms: percentiles(tally.itl),
    protocols,
    transport_errors: tally.transportErrors,
    deferred_followed: deferred,
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
