/**
 * `--slo METRIC OP LIMIT` constraints (`ttft_p95_ms<=2000`, `shed_rate<=0.05`,
 * `goodput_share>=0.9`) over a run's figures (sweep/metrics.ts), and how far a
 * figure misses one.
 */
import { nearest } from '../sim/scenario/issues.js';
import { SweepInputError } from './errors.js';
import { isMetricName, METRIC_NAMES, type MetricName, metricList } from './metrics.js';

/** A comparison an SLO may use. */
export type SloOp = '<=' | '>=' | '<' | '>';

/** One parsed constraint. */
export interface Slo {
  /** The expression in normal form (`ttft_p95_ms<=2000`). */
  text: string;
  metric: MetricName;
  op: SloOp;
  limit: number;
}

const SLO_RE = /^\s*([A-Za-z0-9_]+)\s*(<=|>=|<|>)\s*(\S+)\s*$/;

/**
 * Parses an SLO expression.
 * @throws SweepInputError naming the flag, the expression and what is wrong
 */
export function parseSlo(expr: string): Slo {
  const m = SLO_RE.exec(expr);
  const where = `--slo ${JSON.stringify(expr)}`;
  if (!m) {
    throw new SweepInputError(
      `${where}: expected METRIC<=LIMIT or METRIC>=LIMIT (also < and >), e.g. ttft_p95_ms<=2000`,
    );
  }
  const [, name, op, limitText] = m as unknown as [string, string, SloOp, string];
  if (!isMetricName(name)) {
    const hint = nearest(name, METRIC_NAMES);
    throw new SweepInputError(
      `${where}: unknown metric ${JSON.stringify(name)}${hint ? ` (did you mean ${hint}?)` : ''}; known: ${metricList()}`,
    );
  }
  const limit = Number(limitText);
  if (!Number.isFinite(limit)) {
    throw new SweepInputError(`${where}: the limit ${JSON.stringify(limitText)} is not a number`);
  }
  return { text: `${name}${op}${limit}`, metric: name, op, limit };
}

/** Parses every `--slo`; the same expression twice is an error. */
export function parseSlos(exprs: readonly string[]): Slo[] {
  const out: Slo[] = [];
  for (const e of exprs) {
    const s = parseSlo(e);
    if (out.some((x) => x.text === s.text)) throw new SweepInputError(`--slo ${s.text}: given twice`);
    out.push(s);
  }
  return out;
}

/** True when `value` meets the SLO; a missing figure (null) never does. */
export function meets(slo: Slo, value: number | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  switch (slo.op) {
    case '<=':
      return value <= slo.limit;
    case '<':
      return value < slo.limit;
    case '>=':
      return value >= slo.limit;
    case '>':
      return value > slo.limit;
  }
}

/**
 * How far `value` misses the SLO, relative to the limit (0.15 = 15% beyond
 * it); 0 when met, Infinity for a missing figure. Compares misses of
 * different metrics on one scale.
 */
export function violation(slo: Slo, value: number | null | undefined): number {
  if (value === null || value === undefined) return Number.POSITIVE_INFINITY;
  if (meets(slo, value)) return 0;
  const scale = Math.max(Math.abs(slo.limit), 1e-9);
  const beyond = slo.op === '<=' || slo.op === '<' ? value - slo.limit : slo.limit - value;
  // A strict bound met with equality misses by the smallest amount.
  return Math.max(beyond / scale, Number.EPSILON);
}
