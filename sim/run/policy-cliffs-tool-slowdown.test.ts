/**
 * The essay's cliff "tool and retrieval slowdown behind healthy inference": work-order agents
 * hold their gate permit (FIFO) or their seats (the worked example's policy) through five tool
 * calls that get five times slower for two minutes while the engines stay healthy. Asserts what
 * the two runs measure: before the slowdown the two gates answer alike; during it, under FIFO
 * the permits fill with tool waits while the engines run less than before, and interactive
 * answers go late; under the policy the work-order class stays within its own seats and
 * interactive keeps its useful on-time answers.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { ClassSummary, RunSummary, SecondRow } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const DIR = join(REPO_ROOT, 'scenarios');

async function run(file: string): Promise<{ summary: RunSummary; seconds: SecondRow[]; sink: MemorySink }> {
  const sink = new MemorySink(true);
  const summary = await runScenario(await loadScenario(join(DIR, file)), { sink });
  expect(summary.conservation_ok).toBe(true);
  return { summary, seconds: sink.seconds, sink };
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
    // Same clients: the same logical requests are offered to both gates.
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
    // By send time (seed 1): before the slowdown both gates answer alike (interactive 447 and
    // 455 of 471 useful on time); during it the policy 936 of 953, FIFO 336.
    const usefulSent = (sink: MemorySink, c: string, from: number, to: number) =>
      sink.requests.filter((r) => r.useful === true && r.class === c && r.sent_ms >= from && r.sent_ms < to)
        .length;
    const pre = [fifo, policy].map((x) => usefulSent(x.sink, 'interactive', 0, 60_000));
    expect(Math.min(...pre)).toBeGreaterThan(400);
    expect(Math.abs(pre[0]! - pre[1]!)).toBeLessThan(0.05 * pre[0]!);
    const during = [fifo, policy].map((x) => usefulSent(x.sink, 'interactive', 60_000, 180_000));
    expect(during[0]).toBeLessThan(0.5 * during[1]!);
    expect(during[1]).toBeGreaterThan(850);
    // Whole run: interactive useful on time 1411 of 2344 (60.2 %) under FIFO, 2255 (96.2 %) under
    // the policy; FIFO completes 916 interactive answers late, the policy 49.
    const fi = cls(fifo.summary, 'interactive');
    const pi = cls(policy.summary, 'interactive');
    expect(fi.useful_share).toBeLessThan(0.75);
    expect(pi.useful_share).toBeGreaterThan(0.9);
    expect(fi.completed_late).toBeGreaterThan(10 * pi.completed_late);
    // The policy's seats never fill (measured max 28 leases of 40) and its queues stay short.
    expect(policy.summary.max_inflight).toBeLessThan(40);
    expect(mean(policy.seconds, 70, 180, (r) => r.queued)).toBeLessThan(12);
    // Work-orders sent during the slowdown cannot finish in their 30 s under either gate (10 and
    // 30 of 115 useful): the policy refuses them at once as deadline_impossible rather than
    // holding seats for them; before it, both gates answer nearly all of them (60 and 61 of 61).
    const pw = cls(policy.summary, 'work-order');
    expect(pw.reject_reasons.deadline_impossible ?? 0).toBeGreaterThan(100);
    const woPre = [fifo, policy].map((x) => usefulSent(x.sink, 'work-order', 0, 60_000));
    expect(Math.min(...woPre)).toBeGreaterThan(50);
    for (const x of [fifo, policy])
      expect(usefulSent(x.sink, 'work-order', 60_000, 180_000)).toBeLessThan(50);
  }, 120_000);
});
