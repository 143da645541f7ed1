/**
 * The run summary (`summary.json`, the simulator's `RunSummary` shape) from k6's end-of-test data,
 * as far as k6 can see: counts, goodput, outcomes and refusals come from the script's custom
 * metrics (recorded after the warm-up only); TTFT is time to response headers under stock k6;
 * decisions are the ones the client saw; gate gauges come from the admission headers when the gate
 * exposes them. Pure: called from the script's `handleSummary`.
 */
import { DECISION_REASONS } from '../../gate/decisions.js';
import { round3 } from '../../sim/run/histogram.js';
import type { Percentiles, RunSummary, TenantSummary } from '../../sim/run/records.js';
import { decisionReasonOf } from './goodput.js';
import { type K6Plan, METRIC, OUTCOME_KEYS, REFUSAL_KEYS } from './plan.js';

/** The part of k6's summary data read here. */
export interface K6SummaryData {
  metrics: Record<string, { type?: string; values: Record<string, number> } | undefined>;
  state?: { testRunDurationMs?: number };
}

function value(data: K6SummaryData, metric: string, key: string): number {
  const v = data.metrics[metric]?.values[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function trend(data: K6SummaryData, metric: string): Percentiles {
  const v = (k: string) => round3(value(data, metric, k));
  return {
    count: v('count'),
    p50: v('med'),
    p95: v('p(95)'),
    p99: v('p(99)'),
    max: v('max'),
    mean: v('avg'),
  };
}

/** Jain's fairness index, (Σx)² / (n·Σx²); 1 when all equal or none. */
export function jain(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const sq = xs.reduce((a, b) => a + b * b, 0);
  return xs.length === 0 || sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/** The summary of a k6 run of `plan`. */
export function summaryFromK6(data: K6SummaryData, plan: K6Plan): RunSummary {
  const measuredS = Math.max(1e-9, plan.duration_s - plan.warmup_s);
  const offered = value(data, METRIC.offered, 'count');
  const attempts = value(data, METRIC.attempts, 'count');
  const completed = value(data, METRIC.completed, 'count');
  const good = value(data, METRIC.goodput, 'passes');
  const outcomes: Record<string, number> = {};
  for (const o of OUTCOME_KEYS) outcomes[o] = value(data, `${METRIC.outcomes}{outcome:${o}}`, 'count');
  outcomes.in_system = 0;
  const sheds: Record<string, number> = {};
  const decisions: Record<string, number> = Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));
  decisions.admitted = completed;
  for (const r of REFUSAL_KEYS) {
    const n = value(data, `${METRIC.refusals}{refusal:${r}}`, 'count');
    if (n === 0) continue;
    sheds[r] = n;
    const [status, error] = r.split(' ') as [string, string];
    const reason = decisionReasonOf(Number(status), error, true);
    if (reason !== undefined) decisions[reason] = (decisions[reason] ?? 0) + n;
  }
  const tenants: TenantSummary[] = plan.tenants.map((t) => {
    const g = value(data, `${METRIC.goodput}{tenant:${t}}`, 'passes');
    const off = g + value(data, `${METRIC.goodput}{tenant:${t}}`, 'fails');
    return {
      tenant: t,
      offered: off,
      completed: value(data, `${METRIC.completed}{tenant:${t}}`, 'count'),
      good: g,
      goodput_rps: round3(g / measuredS),
      good_share: off === 0 ? 0 : round3(g / off),
    };
  });
  const accounted = OUTCOME_KEYS.reduce((n, o) => n + (outcomes[o] ?? 0), 0);
  const o = outcomes;
  return {
    scenario: plan.scenario,
    seed: plan.seed,
    dialect: plan.dialect,
    duration_s: plan.duration_s,
    warmup_s: plan.warmup_s,
    measured_s: round3(measuredS),
    offered,
    attempts,
    completed,
    good,
    goodput_rps: round3(good / measuredS),
    throughput_rps: round3(completed / measuredS),
    goodput_share: offered === 0 ? 0 : round3(good / offered),
    shed_rate:
      attempts === 0 ? 0 : round3(((o.shed ?? 0) + (o.timed_out ?? 0) + (o.drained ?? 0)) / attempts),
    decisions,
    sheds,
    outcomes,
    ttft_ms: trend(data, METRIC.ttft),
    e2e_ms: trend(data, METRIC.e2e),
    // k6's metrics carry no per-request token counts: TPOT and output tokens/s are not measured.
    tpot_ms: { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 },
    // k6's http module hands the script a response body only when it is complete: every SSE
    // event of a stream arrives at once, so the gaps between token deliveries are not seen.
    itl_ms: null,
    output_tokens_per_s: null,
    request_throughput_per_s: round3(completed / measuredS),
    queue_wait_ms: trend(data, METRIC.queueWait),
    max_inflight: value(data, METRIC.inflight, 'max'),
    max_queued: value(data, METRIC.queued, 'max'),
    ceilings: { ...plan.ceilings },
    anomalies: { dropped_iterations: value(data, 'dropped_iterations', 'count') },
    tenants,
    jain_fairness: round3(jain(tenants.map((t) => t.good_share))),
    wasted_tokens: 0,
    retry_amplification: offered === 0 ? 1 : round3(attempts / offered),
    conservation_ok: accounted === attempts,
    events: value(data, 'iterations', 'count'),
  };
}
