/**
 * From runs to points: each point's figures averaged over its seeds, its
 * goodput with a 95% Student-t interval, and its verdict against every SLO.
 * SLOs are judged on the mean over seeds, the same figures that are printed.
 */
import { gridPoints, type Params } from './grid.js';
import { type Figures, METRIC_NAMES } from './metrics.js';
import type { SweepPlan } from './plan.js';
import { meets, parseSlo, type Slo, violation } from './slo.js';
import { confidenceInterval, mean, roundTo } from './stats.js';

/** One grid point's result (`points[]` of `--json` and points.json). */
export interface PointResult {
  /** Position in the grid (first --vary outermost). */
  index: number;
  params: Params;
  /** Mean goodput over seeds, req/s. */
  goodput_rps: number;
  /** 95% confidence interval of the mean goodput (Student t, n-1 degrees of freedom); the low end is clipped at 0. */
  ci_low: number;
  ci_high: number;
  /** Goodput of each seed, in seed order. */
  goodput_by_seed: number[];
  /** Meets every SLO (on the means). */
  feasible: boolean;
  /** The SLOs this point misses, in --slo order. */
  failed: string[];
  /** The missed SLO with the largest relative miss. */
  binding?: string;
  /** Every figure's mean over seeds (a figure missing in some seed is left out). */
  figures: Record<string, number>;
  /** 1 = recommended; feasible points first, then by goodput. */
  rank: number;
}

/** The figures of one point, one entry per seed. */
export type SeedFigures = readonly Figures[];

/** Means over seeds; a figure null in any seed is left out. */
export function meanFigures(runs: SeedFigures): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of METRIC_NAMES) {
    const vals = runs.map((r) => r[name]);
    if (vals.length === 0 || vals.some((v) => v === null)) continue;
    out[name] = roundTo(mean(vals as number[]));
  }
  return out;
}

/** Judges a point's mean figures against the SLOs. */
export function judge(
  slos: readonly Slo[],
  figures: Readonly<Record<string, number>>,
): { feasible: boolean; failed: string[]; binding?: string } {
  const failed = slos.filter((s) => !meets(s, figures[s.metric]));
  let binding: Slo | undefined;
  for (const s of failed) {
    if (!binding || violation(s, figures[s.metric]) > violation(binding, figures[binding.metric]))
      binding = s;
  }
  return {
    feasible: failed.length === 0,
    failed: failed.map((s) => s.text),
    ...(binding ? { binding: binding.text } : {}),
  };
}

/** One point from its seeds' figures (rank filled in by the ranking). */
export function pointResult(
  index: number,
  params: Params,
  runs: SeedFigures,
  slos: readonly Slo[],
): PointResult {
  const goodput = runs.map((r) => r.goodput_rps ?? 0);
  const ci = confidenceInterval(goodput);
  const figures = meanFigures(runs);
  return {
    index,
    params,
    goodput_rps: roundTo(ci.mean),
    ci_low: roundTo(Math.max(0, ci.low)),
    ci_high: roundTo(ci.high),
    goodput_by_seed: goodput,
    ...judge(slos, figures),
    figures,
    rank: 0,
  };
}

/**
 * Every point of the plan from the runs' figures by run id.
 * @throws Error when a run is missing (a caller bug; merge checks coverage first)
 */
export function aggregate(plan: SweepPlan, results: ReadonlyMap<number, Figures>): PointResult[] {
  const slos = plan.slo.map(parseSlo);
  const k = plan.seeds.length;
  return gridPoints(plan.vary).map((params, point) => {
    const runs: Figures[] = [];
    for (let s = 0; s < k; s++) {
      const f = results.get(point * k + s);
      if (!f) throw new Error(`run ${point * k + s} (point ${point}, seed index ${s}) has no result`);
      runs.push(f);
    }
    return pointResult(point, params, runs, slos);
  });
}
