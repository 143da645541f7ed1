/**
 * A sweep's plan: everything that fixes its result (the scenario's identity
 * and base settings, the grid, the SLOs, the seeds), as plain JSON so shard
 * files carry it and `sluice merge` can check that shards belong together.
 * The (point, seed) runs are numbered point-major: run id = point × seeds +
 * seed index.
 */
import { createHash } from 'node:crypto';
import type { Scenario } from '../sim/scenario/resolve.js';
import { type BaseSettings, baseSettings, checkPoint } from './apply.js';
import { SweepInputError } from './errors.js';
import { type Dialect, gridPoints, type Params, parseVaries, type Vary } from './grid.js';
import { policyVaryContext } from './policy-vary.js';
import { deriveSeeds } from './seeds.js';
import { parseSlos } from './slo.js';

/** A sweep's plan (serializable). */
export interface SweepPlan {
  /** The scenario's name. */
  scenario: string;
  /** The scenario file as given. */
  file: string;
  /** sha256 of the resolved scenario (file name left out), so shards of different scenarios do not merge. */
  scenario_sha256: string;
  dialect: Dialect;
  /** The scenario's serviceArguments (loxilb) or SMG settings, before the grid is applied. */
  base: BaseSettings;
  /** The scenario's policy file (`gate.policy`) as messages name it, when it has one. */
  policy_file?: string;
  vary: Vary[];
  /** SLO expressions in normal form. */
  slo: string[];
  base_seed: number;
  /** The seed of each seed index. */
  seeds: number[];
}

/** One (point, seed) run. */
export interface SweepTask {
  /** point × seeds + seedIndex. */
  id: number;
  point: number;
  seedIndex: number;
  seed: number;
  params: Params;
}

/** What `sluice size` was asked. */
export interface SweepRequest {
  vary: readonly string[];
  slo: readonly string[];
  /** Seeds per point (>= 1). */
  seeds: number;
  /** Base seed; default the scenario's. */
  baseSeed?: number;
}

/** sha256 of a scenario's content, without the file name it was read under. */
export function scenarioFingerprint(scenario: Scenario): string {
  const { file: _file, ...rest } = scenario;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex');
}

/**
 * Plans a sweep: parses --vary and --slo, derives the seeds and checks every
 * grid point's rule with the gate's validation.
 * @throws SweepInputError for any unusable input
 */
export function planSweep(scenario: Scenario, req: SweepRequest): SweepPlan {
  if (!Number.isInteger(req.seeds) || req.seeds < 1) {
    throw new SweepInputError(`--seeds: ${req.seeds} is not an integer of at least 1`);
  }
  const dialect = scenario.gate.dialect;
  const vary = parseVaries(req.vary, dialect, policyVaryContext(scenario));
  const slo = parseSlos(req.slo).map((s) => s.text);
  for (const p of gridPoints(vary)) checkPoint(scenario, p);
  const baseSeed = req.baseSeed ?? scenario.seed;
  return {
    scenario: scenario.name,
    file: scenario.file,
    scenario_sha256: scenarioFingerprint(scenario),
    dialect,
    base: baseSettings(scenario),
    ...(scenario.policy === undefined ? {} : { policy_file: scenario.policy.file }),
    vary,
    slo,
    base_seed: baseSeed,
    seeds: deriveSeeds(baseSeed, req.seeds),
  };
}

/** Every (point, seed) run of the plan, in id order. */
export function planTasks(plan: SweepPlan): SweepTask[] {
  const out: SweepTask[] = [];
  gridPoints(plan.vary).forEach((params, point) => {
    plan.seeds.forEach((seed, seedIndex) => {
      out.push({ id: point * plan.seeds.length + seedIndex, point, seedIndex, seed, params });
    });
  });
  return out;
}

/** A slice of a sweep: shard `index` (from 0) of `count`. */
export interface Shard {
  index: number;
  count: number;
}

/**
 * Parses `--shard i/n` (i from 0 to n-1, as Kubernetes' JOB_COMPLETION_INDEX counts).
 * @throws SweepInputError naming the flag and the value
 */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m)
    throw new SweepInputError(`--shard ${JSON.stringify(text)}: expected i/n, e.g. 0/4 (i counts from 0)`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1) throw new SweepInputError(`--shard ${text}: n must be at least 1`);
  if (index >= count) {
    throw new SweepInputError(
      `--shard ${text}: i must be from 0 to ${count - 1} (shards count from 0, like JOB_COMPLETION_INDEX)`,
    );
  }
  return { index, count };
}

/**
 * The runs of one shard: those whose id ≡ index (mod count). Round-robin, so
 * each shard gets a similar mix of cheap and expensive points.
 */
export function shardTasks(tasks: readonly SweepTask[], shard: Shard): SweepTask[] {
  return tasks.filter((t) => t.id % shard.count === shard.index);
}
