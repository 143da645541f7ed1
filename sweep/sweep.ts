/**
 * A sizing sweep end to end: plan, run (all or one shard) and the result,
 * the same object whether it comes from one machine or from merged shards.
 */
import type { Scenario } from '../sim/scenario/resolve.js';
import { aggregate, type PointResult } from './aggregate.js';
import type { Figures } from './metrics.js';
import { planTasks, type Shard, type SweepPlan, type SweepTask, shardTasks } from './plan.js';
import { type PoolOptions, runTasks } from './pool.js';
import { type Recommendation, rankPoints, recommend } from './ranking.js';

/** Tag of a sweep result; the same as the report writer's points.json. */
export const SWEEP_KIND = 'sluice.sweep/v1';

/** The result of a sweep: `--json` output and `points.json`. */
export interface SweepResult {
  kind: typeof SWEEP_KIND;
  scenario: string;
  file: string;
  dialect: 'loxilb' | 'smg';
  /** The varied fields in --vary order. */
  varied: string[];
  /** The SLOs in normal form. */
  slo: string[];
  /** How SLOs are judged: on each point's mean over seeds. */
  slo_basis: 'mean_over_seeds';
  /** Seeds per point. */
  seeds: number;
  base_seed: number;
  seed_values: number[];
  /** Every point, in grid order, with its rank. */
  points: PointResult[];
  recommendation: Recommendation;
}

/** Builds the result from every run's figures (by run id). */
export function sweepResult(plan: SweepPlan, results: ReadonlyMap<number, Figures>): SweepResult {
  const points = rankPoints(aggregate(plan, results));
  return {
    kind: SWEEP_KIND,
    scenario: plan.scenario,
    file: plan.file,
    dialect: plan.dialect,
    varied: plan.vary.map((v) => v.field),
    slo: plan.slo,
    slo_basis: 'mean_over_seeds',
    seeds: plan.seeds.length,
    base_seed: plan.base_seed,
    seed_values: plan.seeds,
    points,
    recommendation: recommend(plan, points),
  };
}

/** The runs of a plan, or of one shard of it. */
export function tasksOf(plan: SweepPlan, shard?: Shard): SweepTask[] {
  const all = planTasks(plan);
  return shard ? shardTasks(all, shard) : all;
}

/** Runs the given runs of a plan on the pool; figures by run id. */
export function runSweepTasks(
  scenario: Scenario,
  tasks: readonly SweepTask[],
  opts: PoolOptions = {},
): Promise<Map<number, Figures>> {
  return runTasks(
    [scenario],
    tasks.map((t) => ({ id: t.id, scenario: 0, params: t.params, seed: t.seed })),
    opts,
  );
}

/** Runs every run of a plan and returns its result. */
export async function runSweep(
  scenario: Scenario,
  plan: SweepPlan,
  opts: PoolOptions = {},
): Promise<SweepResult> {
  return sweepResult(plan, await runSweepTasks(scenario, tasksOf(plan), opts));
}
