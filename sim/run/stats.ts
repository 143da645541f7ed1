/**
 * Statistics of a run in bounded memory: the summary's counters and
 * histograms over the measured window, per-tenant figures, and the
 * per-second rows of the time series.
 */
import { DECISION_REASONS } from '../../gate/index.js';
import { LatencyHistogram, MicrosecondHistogram, round3 } from './histogram.js';
import type {
  GapSource,
  Outcome,
  Percentiles,
  RequestRecord,
  RunSummary,
  SecondRow,
  TenantSummary,
} from './records.js';

interface TenantAcc {
  offered: number;
  completed: number;
  good: number;
}

const OUTCOMES: readonly Outcome[] = [
  'completed',
  'shed',
  'timed_out',
  'cancelled',
  'drained',
  'failed',
  'in_system',
];

export class RunStats {
  /** Logical requests first sent in the measured window (inference only). */
  offered = 0;
  attempts = 0;
  completed = 0;
  good = 0;
  wastedTokens = 0;
  readonly outcomes: Record<string, number> = Object.fromEntries(OUTCOMES.map((o) => [o, 0]));
  readonly sheds: Record<string, number> = {};
  readonly ttft = new LatencyHistogram();
  readonly e2e = new LatencyHistogram();
  /** Time per output token after the first, per completed request with at least two: (e2e − TTFT) / (tokens − 1). */
  readonly tpot = new LatencyHistogram();
  /**
   * Inter-token latency: every gap between consecutive token deliveries to the client of a
   * completed streamed request (see `RunSummary.itl_ms`), pooled over the requests: a hundred
   * or so per request, so counted with no logarithm per value.
   */
  readonly itl = new MicrosecondHistogram();
  /** Output tokens of the completed requests. */
  outputTokens = 0;
  readonly queueWait = new LatencyHistogram();
  readonly #tenants = new Map<string, TenantAcc>();
  maxInflight = 0;
  maxQueued = 0;

  // the current second
  #secArrivals = 0;
  #secCompleted = 0;
  #secGood = 0;
  readonly #secTtft: number[] = [];
  readonly #secE2e: number[] = [];
  /** The largest gauge readings since the current second began. */
  #secMaxInflight = 0;
  #secMaxQueued = 0;

  /** @param warmupMs attempts sent before this are left out of the summary */
  constructor(readonly warmupMs: number) {}

  #tenant(t: string): TenantAcc {
    let a = this.#tenants.get(t);
    if (a === undefined) {
      a = { offered: 0, completed: 0, good: 0 };
      this.#tenants.set(t, a);
    }
    return a;
  }

  /** A logical request's first send. */
  offer(tenant: string, sentMs: number): void {
    this.#secArrivals++;
    if (sentMs < this.warmupMs) return;
    this.offered++;
    this.#tenant(tenant).offered++;
  }

  /**
   * One attempt ended (or is still in the system at the end).
   * @param itlGaps the gaps between its consecutive token deliveries, if it completed streamed
   *   (read during the call only)
   */
  record(r: RequestRecord, itlGaps?: GapSource): void {
    if (r.outcome === 'completed') {
      this.#secCompleted++;
      if (r.good) this.#secGood++;
      if (r.ttft_ms !== '') this.#secTtft.push(r.ttft_ms);
      if (r.e2e_ms !== '') this.#secE2e.push(r.e2e_ms);
    }
    if (r.sent_ms < this.warmupMs || !r.inference) return;
    this.attempts++;
    this.outcomes[r.outcome] = (this.outcomes[r.outcome] ?? 0) + 1;
    this.wastedTokens += r.wasted_tokens;
    if (r.status >= 400 && r.error !== '') {
      const k = `${r.status} ${r.error}`;
      this.sheds[k] = (this.sheds[k] ?? 0) + 1;
    }
    if (r.queue_wait_ms !== '' && r.outcome !== 'in_system') this.queueWait.add(r.queue_wait_ms);
    if (r.outcome !== 'completed') return;
    this.completed++;
    const t = this.#tenant(r.tenant);
    t.completed++;
    if (r.ttft_ms !== '') this.ttft.add(r.ttft_ms);
    if (r.e2e_ms !== '') this.e2e.add(r.e2e_ms);
    this.outputTokens += r.generated_tokens;
    if (r.ttft_ms !== '' && r.e2e_ms !== '' && r.generated_tokens >= 2)
      this.tpot.add((r.e2e_ms - r.ttft_ms) / (r.generated_tokens - 1));
    itlGaps?.addTo(this.itl);
    if (r.good) {
      this.good++;
      t.good++;
    }
  }

  /** Closes the current second into a row. */
  second(
    tS: number,
    gate: Omit<
      SecondRow,
      | 't_s'
      | 'arrivals'
      | 'completed'
      | 'good'
      | 'ttft_p50_ms'
      | 'ttft_p95_ms'
      | 'e2e_p50_ms'
      | 'e2e_p95_ms'
      | 'inflight_max'
      | 'queued_max'
    >,
  ): SecondRow {
    this.observe(gate.inflight, gate.queued);
    const ttft = this.#secTtft;
    const e2e = this.#secE2e;
    const row: SecondRow = {
      t_s: tS,
      inflight: gate.inflight,
      queued: gate.queued,
      limit: gate.limit,
      configured_limit: gate.configured_limit,
      queue_depth: gate.queue_depth,
      adapt_state: gate.adapt_state,
      arrivals: this.#secArrivals,
      completed: this.#secCompleted,
      good: this.#secGood,
      ttft_p50_ms: pct(ttft, 0.5),
      ttft_p95_ms: pct(ttft, 0.95),
      e2e_p50_ms: pct(e2e, 0.5),
      e2e_p95_ms: pct(e2e, 0.95),
      inflight_max: this.#secMaxInflight,
      queued_max: this.#secMaxQueued,
      decisions: gate.decisions,
      endpoints: gate.endpoints,
    };
    this.#secArrivals = 0;
    this.#secCompleted = 0;
    this.#secGood = 0;
    this.#secTtft.length = 0;
    this.#secE2e.length = 0;
    // The next second starts from the readings in force now.
    this.#secMaxInflight = gate.inflight;
    this.#secMaxQueued = gate.queued;
    return row;
  }

  /** Notes a gauge reading between seconds (so maxima see every change). */
  observe(inflight: number, queued: number): void {
    if (inflight > this.maxInflight) this.maxInflight = inflight;
    if (queued > this.maxQueued) this.maxQueued = queued;
    if (inflight > this.#secMaxInflight) this.#secMaxInflight = inflight;
    if (queued > this.#secMaxQueued) this.#secMaxQueued = queued;
  }

  tenants(measuredS: number): TenantSummary[] {
    return [...this.#tenants.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tenant, a]) => ({
        tenant,
        offered: a.offered,
        completed: a.completed,
        good: a.good,
        goodput_rps: round3(a.good / measuredS),
        good_share: a.offered === 0 ? 0 : round3(a.good / a.offered),
      }));
  }
}

/** The gaps of a list in ms (a load driver's, measured on the socket) as a {@link GapSource}, rounded to the µs. */
export function gapsFromMs(gapsMs: readonly number[]): GapSource {
  return {
    addTo(sink) {
      for (const g of gapsMs) sink.addUs(Math.round(g * 1000));
    },
  };
}

/** Jain's fairness index of non-negative values: (Σx)² / (n·Σx²); 1 when all equal (or none). */
export function jainIndex(xs: readonly number[]): number {
  const n = xs.length;
  const sum = xs.reduce((a, b) => a + b, 0);
  const sq = xs.reduce((a, b) => a + b * b, 0);
  return n === 0 || sq === 0 ? 1 : (sum * sum) / (n * sq);
}

/** Percentiles of a histogram, rounded to µs (0 when empty). */
export function percentiles(h: LatencyHistogram | MicrosecondHistogram): Percentiles {
  const z = (x: number) => (Number.isFinite(x) ? round3(x) : 0);
  return {
    count: h.count,
    p50: z(h.quantile(0.5)),
    p95: z(h.quantile(0.95)),
    p99: z(h.quantile(0.99)),
    max: z(h.max),
    mean: z(h.mean),
  };
}

/**
 * The q-quantile of `xs` (the nearest rank), rounded to µs; '' when there are none. Selects
 * the rank in place (the second's values are cleared after its row), in linear time: a
 * second at 1,000 requests/s has a thousand of each, and sorting them was a sort per second.
 */
function pct(xs: number[], q: number): number | '' {
  if (xs.length === 0) return '';
  return round3(select(xs, Math.max(0, Math.ceil(q * xs.length) - 1)));
}

/** The `k`-th smallest of `xs` (0-based), reordering `xs` (Hoare's selection, median-of-three pivots). */
export function select(xs: number[], k: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const a = xs[lo] as number;
    const b = xs[mid] as number;
    const c = xs[hi] as number;
    const pivot = Math.max(Math.min(a, b), Math.min(Math.max(a, b), c)); // the median of the three
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((xs[i] as number) < pivot) i++;
      while ((xs[j] as number) > pivot) j--;
      if (i <= j) {
        const t = xs[i] as number;
        xs[i] = xs[j] as number;
        xs[j] = t;
        i++;
        j--;
      }
    }
    // Now xs[lo..j] <= pivot <= xs[i..hi], and every element between j and i equals the pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return xs[k] as number;
  }
  return xs[k] as number;
}

/** Zeroed decision counts, in the counter's order. */
export function zeroDecisions(): Record<string, number> {
  return Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));
}

/** What a summary needs beside the statistics. */
export interface SummaryMeta {
  scenario: string;
  seed: number;
  dialect: RunSummary['dialect'];
  /** Time run, ms (the measured window starts at warmupMs). */
  durationMs: number;
  warmupMs: number;
  decisions: Record<string, number>;
  ceilings: RunSummary['ceilings'];
  anomalies: Record<string, number>;
  events: number;
}

/** The run summary from the statistics: one builder for the simulator and the load driver. */
export function summarize(stats: RunStats, m: SummaryMeta): RunSummary {
  const measuredS = Math.max(1e-9, (m.durationMs - m.warmupMs) / 1000);
  const tenants = stats.tenants(measuredS);
  const attempts = stats.attempts;
  const out = stats.outcomes;
  const accounted = OUTCOMES.reduce((n, k) => n + (out[k] ?? 0), 0);
  return {
    scenario: m.scenario,
    seed: m.seed,
    dialect: m.dialect,
    duration_s: round3(m.durationMs / 1000),
    warmup_s: round3(m.warmupMs / 1000),
    measured_s: round3(measuredS),
    offered: stats.offered,
    attempts,
    completed: stats.completed,
    good: stats.good,
    goodput_rps: round3(stats.good / measuredS),
    throughput_rps: round3(stats.completed / measuredS),
    goodput_share: stats.offered === 0 ? 0 : round3(stats.good / stats.offered),
    shed_rate:
      attempts === 0 ? 0 : round3(((out.shed ?? 0) + (out.timed_out ?? 0) + (out.drained ?? 0)) / attempts),
    decisions: m.decisions,
    sheds: Object.fromEntries(Object.entries(stats.sheds).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    outcomes: out,
    ttft_ms: percentiles(stats.ttft),
    e2e_ms: percentiles(stats.e2e),
    tpot_ms: percentiles(stats.tpot),
    itl_ms: percentiles(stats.itl),
    output_tokens_per_s: round3(stats.outputTokens / measuredS),
    request_throughput_per_s: round3(stats.completed / measuredS),
    queue_wait_ms: percentiles(stats.queueWait),
    max_inflight: stats.maxInflight,
    max_queued: stats.maxQueued,
    ceilings: m.ceilings,
    anomalies: m.anomalies,
    tenants,
    jain_fairness: round3(jainIndex(tenants.map((t) => t.good_share))),
    wasted_tokens: stats.wastedTokens,
    retry_amplification: stats.offered === 0 ? 1 : round3(attempts / stats.offered),
    conservation_ok: accounted === attempts,
    events: m.events,
  };
}
