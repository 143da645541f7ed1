/**
 * The open-loop arrival schedule of a scenario's client config, written once for the simulator
 * and the load generators: the arrival feeds (the workload's, shared or per tenant, and each
 * workload shift's), where each feed ends, the trace's send times, and the token shifts that
 * reshape a new request. The simulator (`sim/run/run.ts`) schedules these feeds on its clock;
 * {@link createSchedule} merges them in the simulator's order for the load driver and the k6
 * plan, so a real run offers the requests the simulated run offered, by construction.
 * Pure: no I/O, no Node or k6 imports (it is inlined into the k6 bundle); a replayed trace is
 * handed in as records already read.
 */

import { seededStreams } from '../kernel/seeded-streams.js';
import { type ArrivalConfig, createArrivalProcess } from './arrivals.js';
import { createDistribution, type Distribution, type DistributionConfig } from './distributions.js';
import { type RequestDescriptor, RequestFactory } from './request-factory.js';
import type { RetryConfig } from './retry.js';
import type { RandomFn, RandomStreams } from './rng.js';
import { createWorkloadArrivals, type WorkloadConfig } from './tenants.js';
import type { TraceRecord } from './trace-parse.js';

export type { RequestDescriptor };

/** A workload shift (the timeline's `workload_shift`), in client-config terms. */
export interface LoadShift {
  atMs: number;
  tenant?: string;
  arrival?: ArrivalConfig;
  promptTokens?: DistributionConfig;
  outputTokens?: DistributionConfig;
}

/** Trace replay settings: record `r` is sent at `startMs + r.atMs / speedup`, at most `limit` records. */
export interface TraceTiming {
  speedup: number;
  startMs: number;
  limit?: number;
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
  trace?: TraceTiming;
}

/** One open-loop source of arrivals. */
export interface ArrivalFeed {
  /** The next arrival (ms, and the tenant it is for; undefined to draw one), or undefined when over. */
  next(): { atMs: number; tenantIndex: number | undefined } | undefined;
  /** Arrivals at or after this time are not sent (a shift for every tenant ends the feeds before it). */
  untilMs: number;
}

/**
 * The open-loop feeds of `setup`, in order: the workload's arrivals (shared or per tenant), then
 * each shift's arrival process from stream `clients.arrival.shift.<i>`; a shift for every tenant
 * ends the feeds listed before it at its time.
 * @param tenants the request factory's tenants (a tenant shift's feed is for that tenant)
 * @throws ClientConfigError when the client config is invalid.
 */
export function arrivalFeeds(
  setup: Pick<LoadSetup, 'workload' | 'shifts'>,
  tenants: readonly { id: string | undefined }[],
  streams: RandomStreams,
  endMs: number,
): ArrivalFeed[] {
  const feeds: ArrivalFeed[] = [];
  const base = createWorkloadArrivals(setup.workload, streams);
  if (base) feeds.push({ next: () => base.next(), untilMs: endMs });
  setup.shifts.forEach((s, i) => {
    if (s.arrival === undefined) return;
    const tenantIndex = s.tenant === undefined ? undefined : tenants.findIndex((t) => t.id === s.tenant);
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
  return feeds;
}

/** The feed's next arrival, or undefined once it reaches its end (or the run's, `endMs`). */
export function nextArrival<A extends { atMs: number }>(
  feed: { next(): A | undefined; untilMs: number },
  endMs: number,
): A | undefined {
  const n = feed.next();
  return n === undefined || n.atMs >= Math.min(feed.untilMs, endMs) ? undefined : n;
}

/** When a trace record is sent, ms. */
export function traceSendAtMs(timing: TraceTiming, record: TraceRecord): number {
  return timing.startMs + record.atMs / timing.speedup;
}

/**
 * Applies the token shifts in force at a new logical request's send time: each shift (for its
 * tenant, or every tenant) in force redraws the prompt and/or output tokens of an inference
 * request from `rng` (stream `clients.shift`).
 */
export function tokenShaper(
  shifts: readonly LoadShift[],
  rng: RandomFn,
): (d: RequestDescriptor) => RequestDescriptor {
  const dists: { prompt?: Distribution; output?: Distribution }[] = shifts.map((s) => ({
    ...(s.promptTokens ? { prompt: createDistribution(s.promptTokens, { integer: true }) } : {}),
    ...(s.outputTokens ? { output: createDistribution(s.outputTokens, { integer: true }) } : {}),
  }));
  return (d) => {
    if (shifts.length === 0) return d;
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

/** An arrival feed, or the trace's records. */
interface Source {
  next(): { atMs: number; tenantIndex: number | undefined; record?: TraceRecord } | undefined;
  untilMs: number;
}

/** A feed's pending arrival, with the order the simulator's event queue gives it. */
interface Head {
  atMs: number;
  tenantIndex: number | undefined;
  record?: TraceRecord;
  /** The simulator's instant for it: `atMs` at its clock's resolution (1 µs), which orders it. */
  atUs: number;
  /** Insertion order among pending arrivals (the queue runs ties first-in first-out). */
  seq: number;
}

/**
 * The open-loop schedule of `setup` (closed-loop users are not part of it), lazily (bounded
 * memory over long runs), as the simulator offers it: the {@link arrivalFeeds} and the trace
 * records in the order the simulator's queue runs them (by instant on its 1 µs clock; at one
 * instant a trace record, read ahead, first, then the arrival scheduled earlier); token shifts
 * in force reshape a new request. Draws from the simulator's streams under `seed`. Send times
 * are kept exact (the simulator's descriptors carry them rounded to its clock's microsecond).
 * @throws ClientConfigError when the client config is invalid.
 */
export function createSchedule(setup: LoadSetup, opts: ScheduleOptions): Schedule {
  const streams = seededStreams(opts.seed);
  const endMs = opts.endMs;
  const factory = new RequestFactory(setup.workload, streams);
  const sources: Source[] = arrivalFeeds(setup, factory.tenants, streams, endMs);
  const records = opts.traceRecords;
  const tr = setup.trace;
  let traceSource = -1;
  if (records !== undefined && tr !== undefined) {
    let i = 0;
    const limit = tr.limit ?? Number.POSITIVE_INFINITY;
    traceSource = sources.length;
    sources.push({
      next: () => {
        const rec = i < limit ? records[i] : undefined;
        i++;
        if (rec === undefined) return undefined;
        return { atMs: traceSendAtMs(tr, rec), tenantIndex: undefined, record: rec };
      },
      untilMs: endMs,
    });
  }
  let seq = 0;
  const pull = (i: number): Head | undefined => {
    const n = nextArrival(sources[i]!, endMs);
    if (n === undefined) return undefined;
    // A trace record is read ahead of the clock, so it is queued before any arrival due with it.
    return { ...n, atUs: Math.round(n.atMs * 1000), seq: i === traceSource ? -1 : seq++ };
  };
  const heads = sources.map((_, i) => pull(i));
  const shaped = tokenShaper(setup.shifts, streams('clients.shift'));
  return {
    next() {
      for (;;) {
        let best = -1;
        heads.forEach((h, i) => {
          if (h === undefined) return;
          const b = best < 0 ? undefined : heads[best]!;
          if (b === undefined || h.atUs < b.atUs || (h.atUs === b.atUs && h.seq < b.seq)) best = i;
        });
        if (best < 0) return undefined;
        const h = heads[best]!;
        heads[best] = pull(best);
        if (h.record !== undefined) return shaped(factory.fromTrace(h.record, h.atMs));
        // An arrival whose instant rounds up onto its feed's end is not sent (nor by the simulator).
        if (h.atUs / 1000 < sources[best]!.untilMs) return shaped(factory.create(h.atMs, h.tenantIndex));
      }
    },
    retry: (previous, atMs) => factory.retry(previous, atMs),
  };
}

/** Every request of a schedule, at most `limit` of them. */
export function collectSchedule(schedule: Schedule, limit = 5_000_000): RequestDescriptor[] {
  const out: RequestDescriptor[] = [];
  for (let d = schedule.next(); d !== undefined && out.length < limit; d = schedule.next()) out.push(d);
  return out;
}
