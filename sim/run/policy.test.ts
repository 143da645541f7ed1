/**
 * The policy in the simulator, end to end, on the essay's worked example: the same clients,
 * engines and provider slowdown behind a plain FIFO gate and behind the policy. Asserts what the
 * essay claims and the run measures: more useful on-time completions, and progress of the
 * protected (interactive) class; and that a policy run is deterministic to the byte.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { RunSummary } from './records.js';
import { runScenario } from './run.js';
import { FileSink, MemorySink } from './sinks.js';

const DIR = join(REPO_ROOT, 'scenarios');

async function run(file: string, sink = new MemorySink(false)): Promise<RunSummary> {
  return runScenario(await loadScenario(join(DIR, file)), { sink });
}

const useful = (s: RunSummary, cls?: string): number =>
  (s.classes ?? [])
    .filter((c) => cls === undefined || c.class === cls)
    .reduce((n, c) => n + c.useful_on_time, 0);

/** Useful on-time completions of `cls` that ended in [fromMs, toMs) of the virtual clock. */
const usefulBetween = (sink: MemorySink, cls: string, fromMs: number, toMs: number): number =>
  sink.requests.filter((r) => {
    if (r.useful !== true || r.class !== cls || r.e2e_ms === '') return false;
    const end = r.sent_ms + r.e2e_ms;
    return end >= fromMs && end < toMs;
  }).length;

/** Completed attempts (any class, useful or not) that ended in [fromMs, toMs) of the virtual clock. */
const completedBetween = (sink: MemorySink, fromMs: number, toMs: number): number =>
  sink.requests.filter((r) => {
    if (r.outcome !== 'completed' || r.e2e_ms === '') return false;
    const end = r.sent_ms + r.e2e_ms;
    return end >= fromMs && end < toMs;
  }).length;

/** Useful on-time completions of every class that ended in [fromMs, toMs). */
const usefulAllBetween = (sink: MemorySink, fromMs: number, toMs: number): number =>
  ['interactive', 'work-order', 'batch'].reduce((n, c) => n + usefulBetween(sink, c, fromMs, toMs), 0);

describe('the worked example, FIFO against the policy', () => {
  it('gives more useful on-time completions, and interactive progress, under the policy', async () => {
    const fifoKept = new MemorySink(true);
    const fifo = await run('worked-example-fifo.yaml', fifoKept);
    const kept = new MemorySink(true);
    const policy = await run('worked-example-policy.yaml', kept);
    for (const s of [fifo, policy]) {
      expect(s.conservation_ok).toBe(true);
      expect(s.offered).toBe(fifo.offered);
      expect(s.classes?.map((c) => c.class).sort()).toEqual(['batch', 'interactive', 'work-order']);
    }
    // Same clients: the same logical requests are offered to both gates.
    const offeredBy = (s: RunSummary): Record<string, number> =>
      Object.fromEntries((s.classes ?? []).map((c) => [c.class, c.offered]));
    expect(offeredBy(policy)).toEqual(offeredBy(fifo));
    // Before the slowdown (t < 60 s) the load fits the 40 seats: both gates answer almost every
    // interactive request in time, and within 2% of each other.
    const preFifo = usefulBetween(fifoKept, 'interactive', 0, 60_000);
    const prePolicy = usefulBetween(kept, 'interactive', 0, 60_000);
    expect(preFifo).toBeGreaterThan(300);
    expect(Math.abs(prePolicy - preFifo)).toBeLessThan(0.02 * preFifo);
    // During the slowdown and the batch burst (60-180 s) FIFO's interactive answers are late;
    // the policy keeps answering in time.
    const inFifo = usefulBetween(fifoKept, 'interactive', 60_000, 180_000);
    const inPolicy = usefulBetween(kept, 'interactive', 60_000, 180_000);
    expect(inFifo).toBeLessThan(20);
    expect(inPolicy).toBeGreaterThan(300);
    // The claim over the whole run: more useful on-time completions in all, for the protected
    // interactive class, and no less progress for the work-order class.
    expect(useful(policy)).toBeGreaterThan(1.3 * useful(fifo));
    expect(useful(policy, 'interactive')).toBeGreaterThan(1.3 * useful(fifo, 'interactive'));
    expect(useful(policy, 'work-order')).toBeGreaterThanOrEqual(useful(fifo, 'work-order'));
    const fi = fifo.classes!.find((c) => c.class === 'interactive')!;
    const pi = policy.classes!.find((c) => c.class === 'interactive')!;
    expect(pi.completed_late).toBeLessThan(fi.completed_late);
    // After the incident (180-300 s) the essay's shape: FIFO completes more requests (its late
    // retries among them), the policy fewer, but more of them useful and on time. During the
    // incident it is not so: the policy completes more, since FIFO's seats hold long batch cases.
    const after = [180_000, 300_000] as const;
    expect(completedBetween(fifoKept, ...after)).toBeGreaterThan(completedBetween(kept, ...after));
    expect(usefulAllBetween(kept, ...after)).toBeGreaterThan(usefulAllBetween(fifoKept, ...after));
    expect(completedBetween(kept, 60_000, 180_000)).toBeGreaterThan(
      completedBetween(fifoKept, 60_000, 180_000),
    );
    // The policy's own books: its scorecard decided every inference attempt of the run exactly
    // once (warm-up included), and every record carries one of the five dispositions.
    const card = policy.policy!.scorecard as { totals: { offered: number } };
    const inference = kept.requests.filter((r) => r.inference);
    expect(card.totals.offered).toBe(inference.length);
    for (const r of inference)
      expect(['admit', 'queue', 'degrade', 'defer', 'reject']).toContain(r.disposition);
    expect(policy.policy!.useful_on_time.interactive).toBe(pi.useful_on_time);
    // The batch burst was deferred and drained at its pace, not sent to the provider at once:
    // fewer batch cases complete within the run than under FIFO.
    const batch = policy.classes!.find((c) => c.class === 'batch')!;
    const fifoBatch = fifo.classes!.find((c) => c.class === 'batch')!;
    expect(batch.dispositions.defer).toBeGreaterThan(400);
    expect(policy.policy!.deferred.completed).toBeGreaterThan(0);
    expect(policy.policy!.deferred.completed).toBeLessThan(batch.dispositions.defer!);
    expect(batch.completed).toBeLessThan(fifoBatch.completed);
  }, 120_000);

  it('reruns the policy scenario to byte-identical outputs', async () => {
    const scenario = await loadScenario(join(DIR, 'worked-example-policy.yaml'));
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'sluice-policy-run-')));
    for (const d of dirs)
      await runScenario(scenario, {
        sink: new FileSink(
          d,
          scenario.endpoints.map((e) => e.id),
          { classColumns: true },
        ),
      });
    for (const f of ['summary.json', 'requests.csv', 'timeseries.csv'])
      expect(readFileSync(join(dirs[1]!, f), 'utf8')).toBe(readFileSync(join(dirs[0]!, f), 'utf8'));
    const header = readFileSync(join(dirs[0]!, 'requests.csv'), 'utf8').split('\n')[0]!;
    expect(header.endsWith(',class,disposition,reason,deadline_met,useful')).toBe(true);
  }, 120_000);
});
