/**
 * Ranking a sweep's points and its recommendation: among the points that
 * meet every SLO, the highest mean goodput wins (ties: the higher lower
 * confidence bound, then the earlier grid point). When no point meets every
 * SLO, the binding constraint is named.
 */
import type { PointResult } from './aggregate.js';
import { policyParamsOf, recommendedRule, ruleParamsOf } from './apply.js';
import { type Params, paramsText } from './grid.js';
import type { SweepPlan } from './plan.js';
import { parseSlo, type Slo, violation } from './slo.js';
import { roundTo } from './stats.js';

/** Orders points best first: feasible before infeasible, then goodput, CI low bound, grid index. */
export function comparePoints(a: PointResult, b: PointResult): number {
  if (a.feasible !== b.feasible) return a.feasible ? -1 : 1;
  return b.goodput_rps - a.goodput_rps || b.ci_low - a.ci_low || a.index - b.index;
}

/** The points with `rank` set (1 = best), in grid order. */
export function rankPoints(points: readonly PointResult[]): PointResult[] {
  const ranked = [...points].sort(comparePoints);
  const rankOf = new Map(ranked.map((p, i) => [p.index, i + 1]));
  return points.map((p) => ({ ...p, rank: rankOf.get(p.index) ?? 0 }));
}

/** Why no point is feasible: the SLO that binds and how close the grid came. */
export interface BindingConstraint {
  slo: string;
  /** Points that miss it. */
  missedBy: number;
  /** Points that miss only it (feasible were it relaxed). */
  missedOnlyBy: number;
  /** The point that comes closest to it, and its figure there (null: none). */
  closest: { params: Params; value: number | null };
}

/**
 * The binding constraint when no point meets every SLO: the SLO whose removal
 * would make the most points feasible (points that miss only it); then the one
 * missed by the most points; then the one the grid comes closest to meeting;
 * then --slo order.
 */
export function bindingConstraint(
  slos: readonly Slo[],
  points: readonly PointResult[],
): BindingConstraint | undefined {
  const stats = slos.map((slo, order) => {
    let missedBy = 0;
    let missedOnlyBy = 0;
    let best: PointResult | undefined;
    let bestMiss = Number.POSITIVE_INFINITY;
    for (const p of points) {
      const v = p.figures[slo.metric];
      const miss = violation(slo, v);
      if (miss > 0) {
        missedBy += 1;
        if (p.failed.length === 1) missedOnlyBy += 1;
      }
      if (best === undefined || miss < bestMiss) {
        best = p;
        bestMiss = miss;
      }
    }
    return { slo, order, missedBy, missedOnlyBy, best, bestMiss };
  });
  stats.sort(
    (a, b) =>
      b.missedOnlyBy - a.missedOnlyBy ||
      b.missedBy - a.missedBy ||
      a.bestMiss - b.bestMiss ||
      a.order - b.order,
  );
  const top = stats[0];
  if (!top || top.missedBy === 0 || !top.best) return undefined;
  return {
    slo: top.slo.text,
    missedBy: top.missedBy,
    missedOnlyBy: top.missedOnlyBy,
    closest: { params: top.best.params, value: top.best.figures[top.slo.metric] ?? null },
  };
}

/** What a sweep recommends (matches the report writer's SweepRecommendation). */
export interface Recommendation {
  feasible: boolean;
  headline: string;
  params?: Params;
  /** `{ serviceArguments }` for loxilb, `{ smg }` for SMG. */
  rule?: Record<string, unknown>;
  /** SMG command-line flags. */
  flags?: string[];
  /** The policy fields of the recommended point, by dotted path, to set in `file`. */
  policy?: { file: string; set: Params };
  binding?: string;
  notes: string[];
}

const fmt = (x: number): string => String(roundTo(x, 3));

/** The binding-constraint sentence. */
export function bindingText(b: BindingConstraint, total: number): string {
  const closest =
    b.closest.value === null
      ? `no point has a value for it`
      : `the closest is ${fmt(b.closest.value)} at ${paramsText(b.closest.params)}`;
  const only = b.missedOnlyBy > 0 ? `, ${b.missedOnlyBy} of them miss nothing else` : '';
  return `${b.slo} binds: ${b.missedBy} of ${total} points miss it${only}; ${closest}`;
}

/** The recommendation of a ranked sweep. */
export function recommend(plan: SweepPlan, points: readonly PointResult[]): Recommendation {
  const ranked = [...points].sort(comparePoints);
  const best = ranked[0];
  const notes: string[] = [];
  if (plan.slo.length === 0) notes.push('No --slo given: points are ranked by goodput alone.');
  if (!best) return { feasible: false, headline: 'The sweep has no points.', notes };
  if (best.feasible) {
    const { rule, flags } = recommendedRule(plan.dialect, plan.base, best.params);
    const policySet = policyParamsOf(best.params);
    const policy =
      plan.policy_file !== undefined && Object.keys(policySet).length > 0
        ? { policy: { file: plan.policy_file, set: policySet } }
        : {};
    // With a policy in charge and only policy fields varied, the rule is as written: not shown.
    const showRule = plan.policy_file === undefined || Object.keys(ruleParamsOf(best.params)).length > 0;
    const rivals = ranked.filter((p) => p !== best && p.feasible && p.ci_high >= best.ci_low);
    if (rivals.length > 0 && plan.seeds.length > 1) {
      const one = rivals.length === 1;
      notes.push(
        `${rivals.length} other point${one ? '' : 's'} meeting every SLO ${one ? 'has a goodput interval' : 'have goodput intervals'} overlapping the best one: more --seeds would separate them.`,
      );
    }
    return {
      feasible: true,
      headline: `${paramsText(best.params)} gives ${fmt(best.goodput_rps)} req/s goodput (95% CI ${fmt(best.ci_low)}–${fmt(best.ci_high)}) within every SLO`,
      params: best.params,
      ...(showRule ? { rule } : {}),
      ...(flags && showRule ? { flags } : {}),
      ...policy,
      notes,
    };
  }
  const slos = plan.slo.map(parseSlo);
  const b = bindingConstraint(slos, points);
  if (!b) return { feasible: false, headline: 'No point meets every SLO.', notes };
  return {
    feasible: false,
    headline: `No point meets every SLO. ${bindingText(b, points.length)}.`,
    binding: b.slo,
    notes: [...notes, 'Relax that SLO, widen the --vary ranges, or add capacity.'],
  };
}
