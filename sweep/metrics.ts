/**
 * The figures a sweep and a check read from a run summary, by name. The names
 * are the vocabulary of `--slo` and `--tolerance`; docs/sizing.md lists them.
 * A figure is `null` when the run gives it no value (no request produced a
 * first token, so there is no TTFT percentile).
 */
import type { RunSummary } from '../sim/run/records.js';

/** Which way a figure is better. */
export type Better = 'higher' | 'lower';

/** One figure of a run. */
export interface MetricSpec {
  /** What it measures, for docs and help. */
  readonly doc: string;
  readonly better: Better;
  /** Reads it from a summary; null when the run has no value for it. */
  readonly of: (s: RunSummary) => number | null;
}

/** A latency percentile, null when nothing was measured. */
const latency =
  (
    pick: (s: RunSummary) => { count: number; p50: number; p95: number; p99: number },
    q: 'p50' | 'p95' | 'p99',
  ) =>
  (s: RunSummary): number | null => {
    const h = pick(s);
    return h.count === 0 ? null : h[q];
  };

/** Every figure a sweep or check knows, in display order. */
export const METRICS = {
  goodput_rps: {
    doc: 'good completions per second over the measured window (completed, TTFT within its SLO, before its deadline)',
    better: 'higher',
    of: (s) => s.goodput_rps,
  },
  goodput_share: {
    doc: 'good completions / logical requests offered (0..1); shed requests stay in the denominator',
    better: 'higher',
    of: (s) => s.goodput_share,
  },
  throughput_rps: {
    doc: 'completions per second, good or not',
    better: 'higher',
    of: (s) => s.throughput_rps,
  },
  shed_rate: {
    doc: 'attempts refused by the gate / attempts (0..1)',
    better: 'lower',
    of: (s) => s.shed_rate,
  },
  ttft_p50_ms: {
    doc: 'median time to first token (ms)',
    better: 'lower',
    of: latency((s) => s.ttft_ms, 'p50'),
  },
  ttft_p95_ms: { doc: 'p95 time to first token (ms)', better: 'lower', of: latency((s) => s.ttft_ms, 'p95') },
  ttft_p99_ms: { doc: 'p99 time to first token (ms)', better: 'lower', of: latency((s) => s.ttft_ms, 'p99') },
  e2e_p50_ms: { doc: 'median end-to-end latency (ms)', better: 'lower', of: latency((s) => s.e2e_ms, 'p50') },
  e2e_p95_ms: { doc: 'p95 end-to-end latency (ms)', better: 'lower', of: latency((s) => s.e2e_ms, 'p95') },
  e2e_p99_ms: { doc: 'p99 end-to-end latency (ms)', better: 'lower', of: latency((s) => s.e2e_ms, 'p99') },
  queue_wait_p95_ms: {
    doc: 'p95 wait in the gate queue among requests that waited (ms; 0 when none waited)',
    better: 'lower',
    of: (s) => (s.queue_wait_ms.count === 0 ? 0 : s.queue_wait_ms.p95),
  },
  jain_fairness: {
    doc: "Jain's index over the tenants' good shares (1 = equal)",
    better: 'higher',
    of: (s) => s.jain_fairness,
  },
  retry_amplification: {
    doc: 'attempts per logical request',
    better: 'lower',
    of: (s) => s.retry_amplification,
  },
  wasted_tokens: {
    doc: 'tokens generated after the client had left',
    better: 'lower',
    of: (s) => s.wasted_tokens,
  },
  max_inflight: { doc: 'peak requests executing', better: 'lower', of: (s) => s.max_inflight },
  max_queued: { doc: 'peak requests waiting in the gate queue', better: 'lower', of: (s) => s.max_queued },
} as const satisfies Record<string, MetricSpec>;

/** A figure's name. */
export type MetricName = keyof typeof METRICS;

/** Every figure name, in display order. */
export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

/** A run's figures by name (null: no value in this run). */
export type Figures = Record<MetricName, number | null>;

/** True when `name` is a known figure. */
export function isMetricName(name: string): name is MetricName {
  return Object.hasOwn(METRICS, name);
}

/** Reads every figure from a run summary. */
export function figuresOf(summary: RunSummary): Figures {
  const out = {} as Figures;
  for (const name of METRIC_NAMES) out[name] = (METRICS[name] as MetricSpec).of(summary);
  return out;
}

/** The known figures, for error messages. */
export function metricList(): string {
  return METRIC_NAMES.join(', ');
}
