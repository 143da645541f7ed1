/**
 * The open-loop arrival schedule of a scenario's client config: which logical requests leave when,
 * drawn exactly as the simulator draws them (same arrival processes, tenant mix, token
 * distributions, shapes and workload shifts, from the same named seeded streams), so a real run
 * offers the requests the simulated run offered. Pure: no I/O, no Node or k6 imports; a replayed
 * trace is handed in as records already read.
 */
import { type ArrivalConfig, createArrivalProcess } from '../../sim/clients/arrivals.js';
import {
  createDistribution,
  type Distribution,
  type DistributionConfig,
} from '../../sim/clients/distributions.js';
import { type RequestDescriptor, RequestFactory } from '../../sim/clients/request-factory.js';
import type { RetryConfig } from '../../sim/clients/retry.js';
import { createWorkloadArrivals, type WorkloadConfig } from '../../sim/clients/tenants.js';
import type { TraceRecord } from '../../sim/clients/trace-parse.js';
import { seededStreams } from './prng.js';

export type { RequestDescriptor };

/** A workload shift (the timeline's `workload_shift`), in client-config terms. */
export interface LoadShift {
  atMs: number;
  tenant?: string;
  arrival?: ArrivalConfig;
  promptTokens?: DistributionConfig;
  outputTokens?: DistributionConfig;
}

/** What the schedule needs of a scenario's client setup (`toClientConfig(scenario)` fits). */
export interface LoadSetup {
  workload: WorkloadConfig;
  retry: RetryConfig;
  /** API key per tenant id. */
  apiKeys: Record<string, string>;
  shifts: readonly LoadShift[];
  /** Closed-loop users: not part of an open-loop schedule (reported, not sent). */
  closedLoop?: unknown;
  /** Trace replay settings; the records themselves are passed to {@link createSchedule}. */
  trace?: { speedup: number; startMs: number; limit?: number };
}

/** Options of {@link createSchedule}. */
export interface ScheduleOptions {
  /** Run seed (the scenario's, or an override). */
  seed: number;
  /** End of the run, ms: nothing is scheduled at or after it. */
  endMs: number;
  /** Records of the scenario's trace, in file order (when it replays one). */
  traceRecords?: readonly TraceRecord[];
}

/** The schedule: new logical requests in time order, and retries of them. */
export interface Schedule {
  /** The next logical request (attempt 1), or undefined when the schedule is over. */
  next(): RequestDescriptor | undefined;
  /** The next attempt of `previous`'s logical request, sent at `atMs`. */
  retry(previous: RequestDescriptor, atMs: number): RequestDescriptor;
}

interface Feed {
  next(): { atMs: number; tenantIndex: number | undefined; record?: TraceRecord } | undefined;
  untilMs: number;
}

/**
 * The open-loop schedule of `setup`, lazily (bounded memory over long runs). Mirrors the
 * simulator's run: the workload's arrivals (shared or per tenant), each shift's arrival process
 * (a shift for every tenant ends the earlier feeds at its time), trace records at
 * `startMs + atMs / speedup`, ties going to the feed listed first; token shifts in force reshape a
 * new request from stream `clients.shift`.
 * @throws ClientConfigError when the client config is invalid.
 */
export function createSchedule(setup: LoadSetup, opts: ScheduleOptions): Schedule {
  const streams = seededStreams(opts.seed);
  const endMs = opts.endMs;
  const factory = new RequestFactory(setup.workload, streams);
  const feeds: Feed[] = [];
  const base = createWorkloadArrivals(setup.workload, streams);
  if (base) feeds.push({ next: () => base.next(), untilMs: endMs });
  setup.shifts.forEach((s, i) => {
    if (s.arrival === undefined) return;
    const tenantIndex =
      s.tenant === undefined ? undefined : factory.tenants.findIndex((t) => t.id === s.tenant);
    if (tenantIndex === undefined) for (const f of feeds) f.untilMs = Math.min(f.untilMs, s.atMs);
    const proc = createArrivalProcess(s.arrival, streams(`clients.arrival.shift.${i}`));
    feeds.push({
      next: () => {
        const at = proc.next();
        return at === undefined ? undefined : { atMs: at, tenantIndex };
      },
      untilMs: endMs,
    });
  });
  const records = opts.traceRecords;
  const tr = setup.trace;
  if (records !== undefined && tr !== undefined) {
    let i = 0;
    const limit = tr.limit ?? Number.POSITIVE_INFINITY;
    feeds.push({
      next: () => {
        const rec = i < limit ? records[i] : undefined;
        i++;
        return rec === undefined
          ? undefined
          : { atMs: tr.startMs + rec.atMs / tr.speedup, tenantIndex: undefined, record: rec };
      },
      untilMs: endMs,
    });
  }
  const heads = feeds.map((f) => live(f, endMs));
  const shaped = shaper(setup.shifts, streams('clients.shift'));
  return {
    next() {
      let best = -1;
      heads.forEach((h, i) => {
        if (h !== undefined && (best < 0 || h.atMs < (heads[best] as { atMs: number }).atMs)) best = i;
      });
      if (best < 0) return undefined;
      const h = heads[best]!;
      heads[best] = live(feeds[best]!, endMs);
      return shaped(
        h.record === undefined ? factory.create(h.atMs, h.tenantIndex) : factory.fromTrace(h.record, h.atMs),
      );
    },
    retry: (previous, atMs) => factory.retry(previous, atMs),
  };
}

/** The feed's next arrival, or undefined once it reaches its end. */
function live(feed: Feed, endMs: number): ReturnType<Feed['next']> {
  const n = feed.next();
  return n === undefined || n.atMs >= Math.min(feed.untilMs, endMs) ? undefined : n;
}

/** Applies the token shifts in force at a new request's send time (as the simulator does). */
function shaper(
  shifts: readonly LoadShift[],
  rng: () => number,
): (d: RequestDescriptor) => RequestDescriptor {
  const dists: { prompt?: Distribution; output?: Distribution }[] = shifts.map((s) => ({
    ...(s.promptTokens ? { prompt: createDistribution(s.promptTokens, { integer: true }) } : {}),
    ...(s.outputTokens ? { output: createDistribution(s.outputTokens, { integer: true }) } : {}),
  }));
  return (d) => {
    let out = d;
    shifts.forEach((s, i) => {
      if (s.atMs > d.sentAtMs || (s.tenant !== undefined && s.tenant !== d.tenant) || !d.inference) return;
      const dist = dists[i]!;
      if (dist.prompt) out = { ...out, promptTokens: Math.max(1, Math.round(dist.prompt.sample(rng))) };
      if (dist.output) out = { ...out, outputTokens: Math.max(1, Math.round(dist.output.sample(rng))) };
    });
    return out;
  };
}

/** Every request of a schedule, at most `limit` of them. */
export function collectSchedule(schedule: Schedule, limit = 5_000_000): RequestDescriptor[] {
  const out: RequestDescriptor[] = [];
  for (let d = schedule.next(); d !== undefined && out.length < limit; d = schedule.next()) out.push(d);
  return out;
}
