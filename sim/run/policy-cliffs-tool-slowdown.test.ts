/**
 * The essay's cliff "tool and retrieval slowdown behind healthy inference": work-order agents
 * hold their gate permit (FIFO) or their seats (the worked example's policy) through five tool
 * calls that get five times slower for two minutes while the engines stay healthy. Asserts what
 * the two runs measure: under FIFO the permits fill with tool waits while the engines run less
 * than before, and interactive answers go late; under the policy the work-order class stays
 * within its seats and interactive keeps its useful on-time answers.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { ClassSummary, RunSummary, SecondRow } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const DIR = join(REPO_ROOT, 'scenarios');

async function run(file: string): Promise<{ summary: RunSummary; seconds: SecondRow[] }> {
  const sink = new MemorySink(true);
  const summary = await runScenario(await loadScenario(join(DIR, file)), { sink });
  expect(summary.conservation_ok).toBe(true);
  return { summary, seconds: sink.seconds };
}

const cls = (s: RunSummary, name: string): ClassSummary => {
  const c = s.classes?.find((x) => x.class === name);
  if (c === undefined) throw new Error(`no class ${name} in ${s.scenario}`);
  return c;
};

/** Mean of `f` over the rows of seconds [from, to). */
const mean = (rows: readonly SecondRow[], from: number, to: number, f: (r: SecondRow) => number): number => {
  const sel = rows.filter((r) => r.t_s >= from && r.t_s < to);
  return sel.reduce((n, r) => n + f(r), 0) / sel.length;
};
const running = (r: SecondRow): number => r.endpoints.reduce((n, e) => n + e.running, 0);

describe('tool and retrieval slowdown behind healthy inference', () => {
  it('fills the FIFO permits with tool waits and idles the engines; the policy keeps interactive on time', async () => {
    const fifo = await run('tool-slowdown-fifo.yaml');
    const policy = await run('policy-tool-slowdown.yaml');
    // Same clients: the same logical requests are offered to both gates (the policy also lists
    // its batch class, which these clients do not use).
    for (const name of ['interactive', 'work-order'])
      expect(cls(policy.summary, name).offered).toBe(cls(fifo.summary, name).offered);
    // Measured (seed 1), FIFO: before the slowdown (10-60 s) 24.8 permits in use, nothing queued,
    // 18.5 sequences running on the engines; during it (70-180 s) 38.9 of 40 permits in use, 38.8
    // queued, and only 13.4 sequences running (of 64 the engines could run).
    const beforeIt = (f: (r: SecondRow) => number) => mean(fifo.seconds, 10, 60, f);
    const duringIt = (f: (r: SecondRow) => number) => mean(fifo.seconds, 70, 180, f);
    expect(beforeIt((r) => r.queued)).toBeLessThan(1);
    expect(duringIt((r) => r.inflight)).toBeGreaterThan(36);
    expect(duringIt((r) => r.queued)).toBeGreaterThan(20);
    expect(duringIt(running)).toBeLessThan(beforeIt(running));
    // Measured: interactive useful on time 1411 of 2344 (60.2 %) under FIFO, 2288 (97.6 %) under
    // the policy; FIFO completes 916 interactive answers late, the policy 27.
    const fi = cls(fifo.summary, 'interactive');
    const pi = cls(policy.summary, 'interactive');
    expect(fi.useful_share).toBeLessThan(0.75);
    expect(pi.useful_share).toBeGreaterThan(0.9);
    expect(pi.useful_on_time).toBeGreaterThan(1.3 * fi.useful_on_time);
    expect(fi.completed_late).toBeGreaterThan(10 * pi.completed_late);
    // The policy's permits never fill: its leases stay far below the 40 seats (measured max 26),
    // and work-orders are refused at their class's quota rather than holding interactive's seats.
    expect(policy.summary.max_inflight).toBeLessThan(40);
    expect(mean(policy.seconds, 70, 180, (r) => r.queued)).toBeLessThan(5);
    const pw = cls(policy.summary, 'work-order');
    expect(pw.reject_reasons.tenant_quota ?? 0).toBeGreaterThan(pw.completed);
    // The cost, measured and kept honest: FIFO completes more work-orders on time (196 against
    // 33) — the policy's 8 work-order seats hold two proposals at a time.
    expect(cls(fifo.summary, 'work-order').useful_on_time).toBeGreaterThan(pw.useful_on_time);
  }, 120_000);
});
