/**
 * What `sluice check` compares and how much a figure may move: per metric a
 * relative and an absolute tolerance, |current − baseline| ≤ abs + rel·|baseline|.
 * `--tolerance METRIC=REL[+ABS]` sets them (`goodput_rps=0.05`: 5%;
 * `ttft_p95_ms=0.02+50`: 2% plus 50 ms; `*=0.01`: every metric).
 */
import { nearest } from '../sim/scenario/issues.js';
import { SweepInputError } from './errors.js';
import { isMetricName, METRIC_NAMES, METRICS, type MetricName } from './metrics.js';

/** How far a figure may move without counting as moved. */
export interface Tolerance {
  rel: number;
  abs: number;
}

/** The figures `sluice check` compares, in table order. */
export const CHECK_METRICS: readonly MetricName[] = [
  'goodput_rps',
  'goodput_share',
  'throughput_rps',
  'shed_rate',
  'ttft_p50_ms',
  'ttft_p95_ms',
  'ttft_p99_ms',
  'e2e_p95_ms',
  'queue_wait_p95_ms',
  'jain_fairness',
  'retry_amplification',
  'wasted_tokens',
];

/**
 * The default: one unit of the summary's rounding (figures carry 3 decimals)
 * plus a millionth, so float noise across Node versions is absorbed and any
 * real change is not.
 */
export const DEFAULT_TOLERANCE: Tolerance = { rel: 1e-6, abs: 0.001 };

/** Tolerances by metric; `*` applies to every metric not named. */
export type ToleranceTable = Partial<Record<MetricName | '*', Tolerance>>;

/**
 * Parses `METRIC=REL[+ABS]`.
 * @throws SweepInputError naming the flag, the metric and the value
 */
export function parseTolerance(arg: string): { metric: MetricName | '*'; tolerance: Tolerance } {
  const where = `--tolerance ${JSON.stringify(arg)}`;
  const m = /^\s*([A-Za-z0-9_*]+)\s*=\s*([^+\s]*)\s*(?:\+\s*(\S+))?\s*$/.exec(arg);
  if (!m) {
    throw new SweepInputError(
      `${where}: expected METRIC=REL or METRIC=REL+ABS, e.g. goodput_rps=0.05 or ttft_p95_ms=0.02+50`,
    );
  }
  const [, name, relText, absText] = m as unknown as [string, string, string, string | undefined];
  if (name !== '*' && !isMetricName(name)) {
    const hint = nearest(name, METRIC_NAMES);
    throw new SweepInputError(
      `${where}: unknown metric ${JSON.stringify(name)}${hint ? ` (did you mean ${hint}?)` : ''}; known: ${METRIC_NAMES.join(', ')}, or * for all`,
    );
  }
  const value = (text: string, what: string): number => {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || n < 0) {
      throw new SweepInputError(
        `${where}: the ${what} tolerance ${JSON.stringify(text)} is not a number >= 0`,
      );
    }
    return n;
  };
  return {
    metric: name as MetricName | '*',
    tolerance: {
      rel: value(relText, 'relative'),
      abs: absText === undefined ? 0 : value(absText, 'absolute'),
    },
  };
}

/** Folds `--tolerance` flags over a table (later flags win). */
export function toleranceTable(args: readonly string[], base: ToleranceTable = {}): ToleranceTable {
  const out: ToleranceTable = { ...base };
  for (const a of args) {
    const { metric, tolerance } = parseTolerance(a);
    out[metric] = tolerance;
  }
  return out;
}

/** The tolerance of `metric`: its own, else `*`, else the default. */
export function toleranceOf(table: ToleranceTable, metric: MetricName): Tolerance {
  return table[metric] ?? table['*'] ?? DEFAULT_TOLERANCE;
}

/** How a figure compares with its baseline. */
export type Verdict = 'same' | 'within' | 'improved' | 'regressed';

/** One figure of one run against its baseline. */
export interface MetricDiff {
  metric: MetricName;
  baseline: number | null;
  current: number | null;
  /** current − baseline (null when either is missing). */
  delta: number | null;
  /** The largest |delta| that is not a move. */
  allowed: number;
  verdict: Verdict;
}

/** Compares one figure: a move beyond the tolerance in the figure's bad direction is a regression. */
export function compareFigure(
  metric: MetricName,
  baseline: number | null,
  current: number | null,
  tol: Tolerance,
): MetricDiff {
  const allowed = baseline === null ? tol.abs : tol.abs + tol.rel * Math.abs(baseline);
  if (baseline === null || current === null) {
    const verdict = baseline === current ? 'same' : 'regressed';
    return { metric, baseline, current, delta: null, allowed, verdict };
  }
  const delta = current - baseline;
  let verdict: Verdict;
  if (delta === 0) verdict = 'same';
  else if (Math.abs(delta) <= allowed) verdict = 'within';
  else verdict = delta > 0 === (METRICS[metric].better === 'higher') ? 'improved' : 'regressed';
  return { metric, baseline, current, delta, allowed, verdict };
}
