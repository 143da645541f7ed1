import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planSweep } from './plan.js';
import { findShardFiles, mergeShards, readShard, writeShard } from './shard.js';
import { runSweep, runSweepTasks, type SweepResult, tasksOf } from './sweep.js';
import { tinyLoxilb, tinySmg } from './test/fixtures.js';

const scenario = tinyLoxilb();
const request = {
  vary: ['fc_max_outstanding=4,8', 'fc_max_queue_depth=0,8'],
  slo: ['ttft_p95_ms<=3000', 'shed_rate<=0.2'],
  seeds: 2,
};
const plan = planSweep(scenario, request);
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-sweep-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let inProcess: SweepResult | undefined;
async function reference(): Promise<SweepResult> {
  inProcess ??= await runSweep(scenario, plan, { workers: 0 });
  return inProcess;
}

describe('a sweep', () => {
  it('plans point-major runs with seeds derived from the scenario seed', () => {
    expect(plan.seeds[0]).toBe(7);
    expect(tasksOf(plan).map((t) => [t.id, t.point, t.seedIndex])).toEqual([
      [0, 0, 0],
      [1, 0, 1],
      [2, 1, 0],
      [3, 1, 1],
      [4, 2, 0],
      [5, 2, 1],
      [6, 3, 0],
      [7, 3, 1],
    ]);
  });

  it('refuses a grid point the gate would refuse before running anything', () => {
    expect(() => planSweep(tinySmg(), { vary: ['queue_timeout_secs=0,5'], slo: [], seeds: 1 })).toThrow(
      '--vary: the point queue_timeout_secs=0 is not a valid rule: smg.queue_timeout_secs: 0 must be above 0 while queue_size is 8',
    );
  });

  it('gives the same JSON with 1 worker, 2 workers and in process', async () => {
    const one = await runSweep(scenario, plan, { workers: 1 });
    const two = await runSweep(scenario, plan, { workers: 2 });
    expect(JSON.stringify(one)).toBe(JSON.stringify(two));
    expect(JSON.stringify(one)).toBe(JSON.stringify(await reference()));
  });

  it('ranks every point and recommends a rule from the scenario with the point applied', async () => {
    const r = await reference();
    expect(r.points).toHaveLength(4);
    expect(r.points.map((p) => p.rank).sort()).toEqual([1, 2, 3, 4]);
    expect(r.points.every((p) => p.goodput_by_seed.length === 2)).toBe(true);
    const best = r.points.find((p) => p.rank === 1)!;
    if (r.recommendation.feasible) {
      expect(r.recommendation.params).toEqual(best.params);
      const args = (r.recommendation.rule as { serviceArguments: Record<string, unknown> }).serviceArguments;
      expect(args).toMatchObject({ externalIP: '192.0.2.10', fc_mode: 'enforce', ...best.params });
    } else {
      expect(r.recommendation.binding).toBeDefined();
    }
  });

  it('reports progress once per run', async () => {
    const seen: [number, number][] = [];
    await runSweepTasks(scenario, tasksOf(plan).slice(0, 3), {
      workers: 0,
      onProgress: (d, t) => seen.push([d, t]),
    });
    expect(seen).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('sweeps SMG settings in an SMG scenario and gives SMG flags', async () => {
    const smg = tinySmg();
    const p = planSweep(smg, { vary: ['max_concurrent_requests=8'], slo: [], seeds: 1 });
    const r = await runSweep(smg, p, { workers: 0 });
    expect(r.recommendation.flags).toEqual([
      '--max-concurrent-requests 8',
      '--queue-size 8',
      '--queue-timeout-secs 2',
    ]);
  });
});

describe('shards and merge', () => {
  it('merges three shards into exactly the unsharded result', async () => {
    const dir = tmp();
    for (let index = 0; index < 3; index++) {
      const shard = { index, count: 3 };
      const results = await runSweepTasks(scenario, tasksOf(plan, shard), { workers: 0 });
      writeShard(dir, plan, shard, results);
    }
    expect(readdirSync(dir).sort()).toEqual(['shard-0-of-3.json', 'shard-1-of-3.json', 'shard-2-of-3.json']);
    const files = findShardFiles([dir]);
    const merged = mergeShards(files.map(readShard), files);
    expect(merged).toEqual(await reference());
  });

  it('names the missing shard when one is not given', async () => {
    const dir = tmp();
    const shard = { index: 0, count: 2 };
    writeShard(dir, plan, shard, await runSweepTasks(scenario, tasksOf(plan, shard), { workers: 0 }));
    const files = findShardFiles([dir]);
    expect(() => mergeShards(files.map(readShard), files)).toThrow(
      'merge: 4 of 8 runs are missing (shards 1/2 not given); first missing run ids: 1, 3, 5, 7',
    );
  });

  it('refuses shards of different sweeps', async () => {
    const dir = tmp();
    const other = planSweep(scenario, { ...request, slo: ['shed_rate<=0.5'] });
    const a = { index: 0, count: 2 };
    const b = { index: 1, count: 2 };
    writeShard(dir, plan, a, await runSweepTasks(scenario, tasksOf(plan, a), { workers: 0 }));
    writeShard(dir, other, b, await runSweepTasks(scenario, tasksOf(other, b), { workers: 0 }));
    const files = findShardFiles([dir]);
    expect(() => mergeShards(files.map(readShard), files)).toThrow(
      /shard-1-of-2\.json: belongs to a different sweep .*plan\.slo differs/,
    );
  });
});
