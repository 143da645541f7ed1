/**
 * The scenario's client section (snake_case) as the client models' config types (camelCase):
 * a mechanical mapping, plus the run's end as the default length of arrival processes and
 * closed-loop users.
 */
import type { ArrivalConfig } from '../clients/arrivals.js';
import type { ClosedLoopConfig } from '../clients/closed-loop.js';
import type { DistributionConfig } from '../clients/distributions.js';
import type { RetryConfig } from '../clients/retry.js';
import type { EnvelopeConfig, TenantConfig, WorkloadConfig } from '../clients/tenants.js';
import type { TraceFormat } from '../clients/trace-files.js';
import type {
  ArrivalSpec,
  ClientsSpec,
  DistributionSpec,
  EnvelopeSpec,
  RetrySpec,
  TenantSpec,
} from './schema.js';

/** Replay of a trace file, resolved. */
export interface TraceReplayConfig {
  /** Absolute path of the trace file. */
  path: string;
  format: TraceFormat;
  /** Time compression. */
  speedup: number;
  /** Virtual time of the first record, ms. */
  startMs: number;
  /** Most records to replay; undefined for all. */
  limit?: number;
  /** Spread records sharing a quantised timestamp over this many ms; undefined for no spreading. */
  spreadQuantisedMs?: number;
}

/** A workload shift from the timeline, in client-config terms. */
export interface WorkloadShiftConfig {
  /** When it applies, ms. */
  atMs: number;
  /** Only this tenant; undefined for every tenant. */
  tenant?: string;
  /** The new arrival process (replacing the tenant's, or the shared one), starting at `atMs` by default. */
  arrival?: ArrivalConfig;
  promptTokens?: DistributionConfig;
  outputTokens?: DistributionConfig;
}

/** Everything the client models need from a scenario. */
export interface ClientSetup {
  workload: WorkloadConfig;
  retry: RetryConfig;
  closedLoop?: ClosedLoopConfig;
  trace?: TraceReplayConfig;
  /** API key each tenant sends, by tenant id (load generators send it). */
  apiKeys: Record<string, string>;
  /** Workload shifts in time order. */
  shifts: WorkloadShiftConfig[];
}

/** The parts of a scenario the client setup depends on. */
export interface ClientSource {
  readonly duration_s: number;
  readonly clients: ClientsSpec & { trace?: { file: string; format?: TraceFormat } };
  readonly timeline: readonly { event: string }[];
}

/** Drops keys whose value is undefined, so configs compare exactly. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** Seconds to whole milliseconds. */
export function msOf(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** A distribution in client-config form. */
export function toDistribution(d: DistributionSpec): DistributionConfig {
  const clamp = { min: d.min, max: d.max };
  switch (d.kind) {
    case 'fixed':
      return compact({ kind: 'fixed', value: d.value, ...clamp });
    case 'uniform':
      return compact({ kind: 'uniform', low: d.low, high: d.high, ...clamp });
    case 'exponential':
      return compact({ kind: 'exponential', mean: d.mean, ...clamp });
    case 'lognormal':
      return d.median !== undefined
        ? compact({ kind: 'lognormal', median: d.median, p95: d.p95 as number, ...clamp })
        : compact({ kind: 'lognormal', mu: d.mu as number, sigma: d.sigma as number, ...clamp });
    case 'empirical':
      return compact({
        kind: 'empirical',
        values: [...d.values],
        weights: d.weights && [...d.weights],
        ...clamp,
      });
  }
}

/**
 * An arrival process in client-config form. A missing `duration_ms` runs to `endMs` (the end of the
 * run); `defaultStartMs` applies when the spec gives no `start_ms`.
 */
export function toArrival(a: ArrivalSpec, endMs: number, defaultStartMs?: number): ArrivalConfig {
  const startMs = a.start_ms ?? defaultStartMs;
  const common = { startMs, maxArrivals: a.max_arrivals };
  const durationMs = (given: number | undefined): number => given ?? Math.max(0, endMs - (startMs ?? 0));
  switch (a.kind) {
    case 'constant':
      return compact({
        kind: 'constant',
        ratePerSec: a.rate_per_sec,
        durationMs: durationMs(a.duration_ms),
        ...common,
      });
    case 'poisson':
      return compact({
        kind: 'poisson',
        ratePerSec: a.rate_per_sec,
        durationMs: durationMs(a.duration_ms),
        ...common,
      });
    case 'ramp':
      return compact({
        kind: 'ramp',
        fromRatePerSec: a.from_rate_per_sec,
        toRatePerSec: a.to_rate_per_sec,
        durationMs: durationMs(a.duration_ms),
        ...common,
      });
    case 'step':
      return compact({
        kind: 'step',
        steps: a.steps.map((s) => ({ durationMs: s.duration_ms, ratePerSec: s.rate_per_sec })),
        ...common,
      });
    case 'spike':
      return compact({
        kind: 'spike',
        baseRatePerSec: a.base_rate_per_sec,
        durationMs: durationMs(a.duration_ms),
        spikeAtMs: a.spike_at_ms,
        spikeRatePerSec: a.spike_rate_per_sec,
        spikeDurationMs: a.spike_duration_ms,
        spikeCount: a.spike_count,
        ...common,
      });
    case 'diurnal':
      return compact({
        kind: 'diurnal',
        meanRatePerSec: a.mean_rate_per_sec,
        amplitudePerSec: a.amplitude_per_sec,
        periodMs: a.period_ms,
        phaseMs: a.phase_ms,
        durationMs: durationMs(a.duration_ms),
        ...common,
      });
    case 'trace':
      return compact({ kind: 'trace', atMs: [...a.at_ms], speedup: a.speedup, ...common });
  }
}

/** A retry policy in client-config form. */
export function toRetry(r: RetrySpec): RetryConfig {
  switch (r.kind) {
    case 'none':
      return { kind: 'none' };
    case 'honour':
      return compact({ kind: 'honour', maxRetries: r.max_retries, fallbackDelayMs: r.fallback_delay_ms });
    case 'sdk':
      return compact({
        kind: 'sdk',
        maxRetries: r.max_retries,
        initialDelayMs: r.initial_delay_ms,
        maxDelayMs: r.max_delay_ms,
        maxRetryAfterSec: r.max_retry_after_sec,
      });
    case 'naive':
      return compact({ kind: 'naive', maxRetries: r.max_retries });
    case 'synchronised':
      return compact({
        kind: 'synchronised',
        delayMs: r.delay_ms,
        maxRetries: r.max_retries,
        honourRetryAfter: r.honour_retry_after,
      });
  }
}

type ShapeSpec = Pick<
  TenantSpec,
  | 'prompt_tokens'
  | 'output_tokens'
  | 'stream_share'
  | 'h2_share'
  | 'pd_share'
  | 'non_inference_share'
  | 'deadline_ms'
  | 'ttft_slo_ms'
  | 'tool_ms'
  | 'envelope'
>;

/** The scenario's envelope inputs in client-config form. */
function toEnvelope(e: EnvelopeSpec | undefined): EnvelopeConfig | undefined {
  if (e === undefined) return undefined;
  return compact({
    className: e.class,
    route: e.route,
    deadlineMs: e.deadline_ms,
    consequence: e.consequence,
    idempotency: e.idempotency,
    toolCalls: e.tool_calls,
    reserve: e.reserve,
    promptEstimateShare: e.prompt_estimate_share,
  });
}

function shape(s: ShapeSpec) {
  return {
    promptTokens: s.prompt_tokens && toDistribution(s.prompt_tokens),
    outputTokens: s.output_tokens && toDistribution(s.output_tokens),
    streamShare: s.stream_share,
    h2Share: s.h2_share,
    pdShare: s.pd_share,
    nonInferenceShare: s.non_inference_share,
    deadlineMs: s.deadline_ms,
    ttftSloMs: s.ttft_slo_ms,
    toolMs: s.tool_ms && toDistribution(s.tool_ms),
    envelope: toEnvelope(s.envelope),
  };
}

/** The client setup of a scenario (see {@link ClientSetup}). */
export function toClientConfig(scenario: ClientSource): ClientSetup {
  const c = scenario.clients;
  const endMs = msOf(scenario.duration_s);
  const tenants: TenantConfig[] | undefined = c.tenants?.map((t) =>
    compact({ id: t.id, weight: t.weight, arrival: t.arrival && toArrival(t.arrival, endMs), ...shape(t) }),
  );
  const workload: WorkloadConfig = compact({
    arrival: c.arrival && toArrival(c.arrival, endMs),
    tenants,
    ...shape(c),
  });
  const apiKeys: Record<string, string> = {};
  for (const t of c.tenants ?? [])
    if (t.id !== undefined && t.api_key !== undefined) apiKeys[t.id] = t.api_key;
  const setup: ClientSetup = { workload, retry: toRetry(c.retry), apiKeys, shifts: [] };
  if (c.closed_loop !== undefined) {
    const u = c.closed_loop;
    setup.closedLoop = compact({
      users: u.users,
      thinkTimeMs: toDistribution(u.think_time_ms),
      startMs: u.start_ms,
      rampUpMs: u.ramp_up_ms,
      stopAtMs: u.stop_at_ms ?? endMs,
      requestsPerUser: u.requests_per_user,
    });
  }
  if (c.trace !== undefined) {
    const t = c.trace;
    setup.trace = compact({
      path: t.file,
      format: t.format ?? 'azure',
      speedup: t.speedup,
      startMs: t.start_ms,
      limit: t.limit,
      spreadQuantisedMs: t.spread_quantised_ms,
    });
  }
  for (const e of scenario.timeline as readonly TimelineLike[]) {
    if (e.event !== 'workload_shift') continue;
    const atMs = msOf(e.at_s);
    setup.shifts.push(
      compact({
        atMs,
        tenant: e.tenant,
        arrival: e.arrival && toArrival(e.arrival, endMs, atMs),
        promptTokens: e.prompt_tokens && toDistribution(e.prompt_tokens),
        outputTokens: e.output_tokens && toDistribution(e.output_tokens),
      }),
    );
  }
  return setup;
}

interface TimelineLike {
  event: string;
  at_s: number;
  tenant?: string;
  arrival?: ArrivalSpec;
  prompt_tokens?: DistributionSpec;
  output_tokens?: DistributionSpec;
}
