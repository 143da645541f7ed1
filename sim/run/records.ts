/**
 * The simulator's run outputs: one record per request attempt, one row per
 * simulated second, and the summary. The load driver writes the same shapes,
 * so every report works on a simulated or a real run.
 */
import type { RequestOutcome } from '../clients/decision-record.js';

/**
 * How a request attempt ended: the decision log's outcomes (`sim/clients/decision-record.ts`), plus
 * `in_system` for an attempt not finished when the run ended.
 */
export type Outcome = RequestOutcome | 'in_system';

/** One request attempt. Times in ms of virtual time. */
export interface RequestRecord {
  /** The attempt's id: unique in the run, counting from 1. */
  id: number;
  /** The logical request's id, which its retries share. */
  logical_id: number;
  attempt: number;
  tenant: string;
  /** When this attempt was sent. */
  sent_ms: number;
  protocol: 'http1' | 'h2';
  stream: boolean;
  pd: boolean;
  inference: boolean;
  prompt_tokens: number;
  output_tokens: number;
  /** The gate's first decision: admit, queued, refuse, bypass. */
  decision: 'admit' | 'queued' | 'refuse' | 'bypass';
  outcome: Outcome;
  /** HTTP status the client saw (0 when it left before any answer). */
  status: number;
  /** `error` of a refusal body, else ''. */
  error: string;
  endpoint: string;
  /** Time waiting in the gate's queue (ms); '' when it never waited. */
  queue_wait_ms: number | '';
  /** Sent → first token (ms); '' without one. */
  ttft_ms: number | '';
  /** Sent → end (ms). */
  e2e_ms: number | '';
  /** Completed, TTFT within its SLO and finished before its deadline. */
  good: boolean;
  /** Output tokens the client received. */
  generated_tokens: number;
  /** Tokens generated after the client had left. */
  wasted_tokens: number;
  /**
   * Time per output token after the first (TPOT), ms: (e2e − TTFT) / (generated tokens − 1), as
   * `vllm bench serve` computes it per request; '' unless the attempt completed with two or more
   * output tokens and a TTFT. (A column added after the first layout: it comes last.)
   */
  tpot_ms: number | '';
  // ---- only for clients with admission-envelope inputs (see CLASS_REQUEST_COLUMNS)
  /** The request's workload class (the envelope's; with a policy, as the policy derived it). */
  class?: string;
  /** With a policy, its one disposition: admit, queue, degrade, defer, reject; else ''. */
  disposition?: string;
  /** With a policy: the reject reason, the degrade mode, or the reason a queued request expired; else ''. */
  reason?: string;
  /** Completed by its deadline (the envelope's, else the client's); '' when it has none. */
  deadline_met?: boolean | '';
  /** Completed while its client still waited, by its deadline: a useful on-time completion. */
  useful?: boolean;
}

/** Columns appended to `requests.csv` when the clients carry envelope inputs (the rest keep their place). */
export const CLASS_REQUEST_COLUMNS = [
  'class',
  'disposition',
  'reason',
  'deadline_met',
  'useful',
] as const satisfies readonly (keyof RequestRecord)[];

export const REQUEST_COLUMNS: readonly (keyof RequestRecord)[] = [
  'id',
  'logical_id',
  'attempt',
  'tenant',
  'sent_ms',
  'protocol',
  'stream',
  'pd',
  'inference',
  'prompt_tokens',
  'output_tokens',
  'decision',
  'outcome',
  'status',
  'error',
  'endpoint',
  'queue_wait_ms',
  'ttft_ms',
  'e2e_ms',
  'good',
  'generated_tokens',
  'wasted_tokens',
  'tpot_ms',
];

/**
 * The inter-token gaps of one attempt, handed over with its record (`RunStats.record`): read
 * only during that call.
 */
export interface GapSource {
  /** Hands every gap, in whole µs, to `sink`. */
  addTo(sink: { addUs(us: number): void }): void;
}

/** Percentiles of a distribution, ms. */
export interface Percentiles {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Per-tenant figures. */
export interface TenantSummary {
  tenant: string;
  offered: number;
  completed: number;
  good: number;
  goodput_rps: number;
  /** This tenant's good completions over its offered requests. */
  good_share: number;
}

/** The run summary (`summary.json`). Rates are over the measured window (after warm-up). */
export interface RunSummary {
  scenario: string;
  seed: number;
  dialect: 'loxilb' | 'smg';
  duration_s: number;
  warmup_s: number;
  /** Seconds over which rates are computed. */
  measured_s: number;
  /** Logical requests first sent inside the measured window. */
  offered: number;
  /** Attempts sent inside the measured window (retries included). */
  attempts: number;
  completed: number;
  good: number;
  goodput_rps: number;
  throughput_rps: number;
  /** good / offered. */
  goodput_share: number;
  /** Refused attempts / attempts. */
  shed_rate: number;
  /** Gate decisions by reason over the whole run (the decisions counter). */
  decisions: Record<string, number>;
  /** Refusals the clients saw, by `status error`. */
  sheds: Record<string, number>;
  outcomes: Record<string, number>;
  ttft_ms: Percentiles;
  e2e_ms: Percentiles;
  /**
   * Time per output token after the first (TPOT), per completed request with two or more:
   * (e2e − TTFT) / (output tokens − 1), as `vllm bench serve` reports it. Count 0 where not
   * measured (a k6 run carries no per-request token counts).
   */
  tpot_ms: Percentiles;
  /**
   * Inter-token latency (ITL): every gap between two consecutive deliveries of output tokens to
   * the client of a completed streamed request, pooled over the requests, as `vllm bench serve`
   * pools its `itls` (vllm/benchmarks/serve.py). A delivery is an SSE event carrying output
   * text: several tokens in one event are one delivery (one gap), events read in one socket
   * read are gaps of 0. Non-streamed requests contribute none (their client sees one delivery).
   * Percentiles are nearest-rank, from buckets at most 0.1 % wide (`MicrosecondHistogram`:
   * never below the sample, at most 0.1 % above it, exact below 1.024 ms). null where not measured (a k6 run: k6 hands its script the
   * whole body at once, so the gaps are not seen).
   */
  itl_ms: Percentiles | null;
  /** Output tokens of the completed requests per measured second; null where not measured (a k6 run). */
  output_tokens_per_s: number | null;
  /**
   * Completed requests per measured second: vLLM's `request_throughput` (completed / duration).
   * The same figure as `throughput_rps`, under the name an engine user looks for.
   */
  request_throughput_per_s: number;
  queue_wait_ms: Percentiles;
  max_inflight: number;
  max_queued: number;
  /** The configured ceilings beside the maxima. */
  ceilings: { max_outstanding: number; queue_depth: number; queue_wait_ms: number };
  anomalies: Record<string, number>;
  tenants: TenantSummary[];
  /** Jain's fairness index over the tenants' good shares (1 = equal). */
  jain_fairness: number;
  wasted_tokens: number;
  /** Attempts per logical request. */
  retry_amplification: number;
  /** Conservation: attempts = completed + shed + timed_out + cancelled + drained + failed + in_system. */
  conservation_ok: boolean;
  events: number;
  /** Per workload class, when the clients carry envelope classes (with or without a policy). */
  classes?: ClassSummary[];
  /** The policy's scorecard, when the scenario has `gate.policy`. */
  policy?: PolicySummary;
}

/** One workload class's outcomes over the measured window. */
export interface ClassSummary {
  class: string;
  /** Logical requests first sent in the measured window. */
  offered: number;
  attempts: number;
  completed: number;
  /** Completions while the client still waited, by the request's deadline. */
  useful_on_time: number;
  /** useful_on_time / offered. */
  useful_share: number;
  /** Completions after the deadline (work done too late to be useful). */
  completed_late: number;
  /** Attempts by disposition (with a policy; empty otherwise). */
  dispositions: Record<string, number>;
  /** Rejected attempts by reason (with a policy; empty otherwise). */
  reject_reasons: Record<string, number>;
  /** Time in the policy's queue of attempts that queued, ms. */
  queue_wait_ms: Percentiles;
}

/** The policy section of `summary.json`: the host's scorecard snapshot and the simulator's own tallies. */
export interface PolicySummary {
  /** The policy file. */
  file: string;
  /** The gate host's scorecard (`PolicyGate.snapshot()`), as it reports it. */
  scorecard: unknown;
  /** Useful on-time completions per class (the simulator's measure, from the clients' side). */
  useful_on_time: Record<string, number>;
  /** Requests deferred and later completed / still pending at the end. */
  deferred: { completed: number; pending_at_end: number };
  /**
   * How the defer store bore up (the scorecard's `defer_store`): calls that threw, defers refused
   * for it, drain steps it stopped, item ends not yet written. Absent in summaries of older runs.
   */
  defer_store?: DeferStoreFigures;
  /**
   * Per dependency of the policy (a class's `depends_on` name): its `dependency_outage` periods
   * and time open over the whole run. Only in runs whose timeline has a `dependency_outage`.
   */
  dependencies?: Record<string, DependencyFigures>;
  /**
   * Per fallback pool of `gate.fallback_pools`: its engines and what became of the requests the
   * policy's pool degrade sent to it (sim/run/fallback-pools.ts). Only in runs that declare one.
   */
  fallback_pools?: Record<string, FallbackPoolFigures>;
}

/** What became of the requests degraded to one fallback pool, over the whole run. */
export interface FallbackPoolFigures {
  /** Engines of the pool. */
  engines: number;
  /** Requests the policy degraded to it. */
  sent: number;
  /** Of those: completed; completed by the policy's deadline with the client still there. */
  completed: number;
  useful_on_time: number;
  /** Failed (no endpoint, an engine's refusal), cancelled (the client left), timed out. */
  failed: number;
  cancelled: number;
  /** Still running when the run ended (sent and not ended). */
  in_system_at_end: number;
}

/** How one dependency's outages went, over the whole run. */
export interface DependencyFigures {
  /** Times it opened. */
  opened: number;
  /** Time it was open, ms (a period still open at the end counts to the end). */
  open_ms: number;
}

/**
 * The scorecard's `defer_store` figures, as the summary carries them (the shape of the gate's
 * `DeferStoreSnapshot`, written out here because this module is also bundled into the k6
 * scripts, which must not pull in the gate).
 */
export interface DeferStoreFigures {
  failures: number;
  refused_defers: number;
  stopped_drains: number;
  unrecorded_ends: number;
}

/** One row per simulated second (`timeseries.csv`). */
export interface SecondRow {
  t_s: number;
  inflight: number;
  queued: number;
  /** The service ceiling in force (adaptive one while adapting; 0 = none). */
  limit: number;
  configured_limit: number;
  queue_depth: number;
  adapt_state: string;
  arrivals: number;
  completed: number;
  good: number;
  ttft_p50_ms: number | '';
  ttft_p95_ms: number | '';
  e2e_p50_ms: number | '';
  e2e_p95_ms: number | '';
  /** The most requests in flight at any moment of this second (`inflight` is the reading at its end). */
  inflight_max: number;
  /** The most requests queued at any moment of this second (`queued` is the reading at its end). */
  queued_max: number;
  /** Decisions in this second, by reason. */
  decisions: Record<string, number>;
  /** Per endpoint: running, waiting, KV usage (0..1). */
  endpoints: { id: string; running: number; waiting: number; kv_usage: number }[];
}

/** The scalar columns of `timeseries.csv`, in file order (decisions and endpoints follow). */
export const SECOND_SCALAR_COLUMNS = [
  't_s',
  'inflight',
  'queued',
  'limit',
  'configured_limit',
  'queue_depth',
  'adapt_state',
  'arrivals',
  'completed',
  'good',
  'ttft_p50_ms',
  'ttft_p95_ms',
  'e2e_p50_ms',
  'e2e_p95_ms',
] as const satisfies readonly (keyof SecondRow)[];

/**
 * The per-second maxima, the last columns of `timeseries.csv` (after the endpoints'): added
 * after the first layout, so every earlier column keeps its place.
 */
export const SECOND_MAX_COLUMNS = [
  'inflight_max',
  'queued_max',
] as const satisfies readonly (keyof SecondRow)[];
