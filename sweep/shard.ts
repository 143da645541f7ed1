/**
 * Shard files of a sweep split over machines (`sluice size --shard i/n`) and
 * their merge (`sluice merge DIR...`): each shard file carries the plan and
 * its runs' figures; the merge checks that the shards share one plan and
 * cover every run exactly once, then builds the same result an unsharded
 * sweep gives.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { SweepInputError } from './errors.js';
import { type Figures, METRIC_NAMES } from './metrics.js';
import { planTasks, type Shard, type SweepPlan } from './plan.js';
import { type SweepResult, sweepResult } from './sweep.js';

/** Tag of a shard file. */
export const SHARD_KIND = 'sluice.sweep-shard/v1';

/** A shard file. */
export interface ShardFile {
  kind: typeof SHARD_KIND;
  shard: Shard;
  plan: SweepPlan;
  /** The shard's runs, in id order. */
  runs: { id: number; seed: number; figures: Figures }[];
}

/** The file name of shard `index` of `count`. */
export function shardFileName(shard: Shard): string {
  return `shard-${shard.index}-of-${shard.count}.json`;
}

/** Writes a shard file into `dir`; returns its path. */
export function writeShard(
  dir: string,
  plan: SweepPlan,
  shard: Shard,
  results: ReadonlyMap<number, Figures>,
): string {
  const seeds = plan.seeds.length;
  const runs = [...results.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([id, figures]) => ({ id, seed: plan.seeds[id % seeds] ?? 0, figures }));
  const file: ShardFile = { kind: SHARD_KIND, shard, plan, runs };
  mkdirSync(dir, { recursive: true });
  const path = join(dir, shardFileName(shard));
  writeFileSync(path, `${JSON.stringify(file)}\n`);
  return path;
}

const figure = z.number().nullable();
const figuresShape = z.object(Object.fromEntries(METRIC_NAMES.map((n) => [n, figure])));
const shardShape = z.object({
  kind: z.literal(SHARD_KIND),
  shard: z.object({ index: z.number().int().nonnegative(), count: z.number().int().positive() }),
  plan: z.object({
    scenario: z.string(),
    file: z.string(),
    scenario_sha256: z.string(),
    dialect: z.enum(['loxilb', 'smg']),
    base: z.record(z.string(), z.unknown()),
    vary: z.array(z.object({ field: z.string(), values: z.array(z.number()) })),
    slo: z.array(z.string()),
    base_seed: z.number(),
    seeds: z.array(z.number()).min(1),
  }),
  runs: z.array(z.object({ id: z.number().int().nonnegative(), seed: z.number(), figures: figuresShape })),
});

/** Reads and checks one shard file. */
export function readShard(path: string): ShardFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SweepInputError(`${path}: cannot be read as JSON (${(err as Error).message})`);
  }
  const r = shardShape.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new SweepInputError(
      `${path}: not a sweep shard file (${first ? `${first.path.join('.') || '(top)'}: ${first.message}` : 'invalid'})`,
    );
  }
  return r.data as ShardFile;
}

/** The shard files named by `paths`: a file as is, a directory's shard-*-of-*.json files. */
export function findShardFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new SweepInputError(`${p}: no such file or directory`);
    }
    if (!isDir) {
      out.push(p);
      continue;
    }
    const files = readdirSync(p)
      .filter((f) => /^shard-\d+-of-\d+\.json$/.test(f))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    if (files.length === 0) throw new SweepInputError(`${p}: no shard-*-of-*.json files`);
    out.push(...files.map((f) => join(p, f)));
  }
  return out;
}

/**
 * Merges shard files into the sweep's result.
 * @throws SweepInputError when shards come from different sweeps, disagree on a run, or leave runs missing
 */
export function mergeShards(files: readonly ShardFile[], names: readonly string[] = []): SweepResult {
  const first = files[0];
  if (!first) throw new SweepInputError('merge: no shard files given');
  const plan = first.plan;
  const results = new Map<number, Figures>();
  const total = planTasks(plan).length;
  files.forEach((f, i) => {
    const name = names[i] ?? `shard ${f.shard.index}/${f.shard.count}`;
    if (!isDeepStrictEqual(f.plan, plan)) {
      const field = (Object.keys(plan) as (keyof SweepPlan)[]).find(
        (k) => !isDeepStrictEqual(f.plan[k], plan[k]),
      );
      throw new SweepInputError(
        `${name}: belongs to a different sweep than ${names[0] ?? 'the first shard'} (plan.${field ?? '?'} differs)`,
      );
    }
    for (const run of f.runs) {
      if (run.id >= total)
        throw new SweepInputError(`${name}: run ${run.id} is outside the plan's ${total} runs`);
      const had = results.get(run.id);
      if (had && !isDeepStrictEqual(had, run.figures)) {
        throw new SweepInputError(`${name}: run ${run.id} disagrees with another shard's result for it`);
      }
      results.set(run.id, run.figures);
    }
  });
  if (results.size < total) {
    const missing: number[] = [];
    for (let id = 0; id < total && missing.length < total; id++) if (!results.has(id)) missing.push(id);
    const counts = new Set(files.map((f) => f.shard.count));
    const only = counts.size === 1 ? [...counts][0]! : undefined;
    const shards =
      only === undefined ? [] : [...new Set(missing.map((id) => id % only))].sort((a, b) => a - b);
    throw new SweepInputError(
      `merge: ${missing.length} of ${total} runs are missing${
        shards.length > 0 ? ` (shards ${shards.map((s) => `${s}/${only}`).join(', ')} not given)` : ''
      }; first missing run ids: ${missing.slice(0, 10).join(', ')}`,
    );
  }
  return sweepResult(plan, results);
}
