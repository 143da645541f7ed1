/**
 * Two more cliffs of "The Queue Is a Policy" behind a policy: recovery with a large deferred
 * backlog (the drain empties it after the incident without a second spike, and the scorecard
 * measures the recovery), and cost
 * underestimation (envelopes report a quarter of long prompts), run with estimator feedback off
 * and on. Each asserts what the run measures (seed 1); the figures in the comments are measured.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicySnapshot } from '../../gate/index.js';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { Scenario } from '../scenario/resolve.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const DIR = join(REPO_ROOT, 'scenarios');

async function run(scenario: Scenario): Promise<{ summary: RunSummary; records: RequestRecord[] }> {
  const sink = new MemorySink(true);
  const summary = await runScenario(scenario, { sink });
  expect(summary.conservation_ok).toBe(true);
  return { summary, records: sink.requests };
}

/** Useful on-time answers of `cls` per logical request sent in [fromMs, toMs). */
function usefulShare(rs: readonly RequestRecord[], cls: string, fromMs: number, toMs: number): number {
  const sel = rs.filter((r) => r.class === cls && r.sent_ms >= fromMs && r.sent_ms < toMs);
  return sel.filter((r) => r.useful === true).length / new Set(sel.map((r) => r.logical_id)).size;
}

/**
 * The first moment at or after `fromMs` when no live request waits in a policy queue, from the
 * records' waits ([sent_ms, sent_ms + queue_wait_ms) of every queued attempt; deferred items
 * wait in the store, not a queue).
 */
function firstIdleAfter(rs: readonly RequestRecord[], fromMs: number): number {
  const waits = rs
    .filter((r) => r.disposition === 'queue' && Number(r.queue_wait_ms) > 0)
    .map((r) => [r.sent_ms, r.sent_ms + Number(r.queue_wait_ms)] as const)
    .sort((a, b) => a[0] - b[0]);
  let t = fromMs;
  for (const [start, end] of waits) {
    if (end <= t) continue;
    if (start > t) break;
    t = end;
  }
  return t;
}

/** The part of the host's scorecard these tests read. */
interface ClassCard {
  deferred: number;
  drained: number;
  defer_expired: number;
  defer_backlog: number;
  completed: number;
  useful_on_time: number;
  estimator: {
    reconciled: number;
    seat_error_sum: number;
    underestimated: number;
    correction_factor: number;
  };
}
interface Card {
  classes: Record<string, ClassCard>;
  /** The gate's own type of the section: the test reads what the scorecard declares. */
  recovery: PolicySnapshot['recovery'];
}
const card = (s: RunSummary): Card => s.policy!.scorecard as Card;

describe('policy cliffs: deferred backlog, cost underestimation', () => {
  it('recovery with a large deferred backlog: the drain empties it after the incident, without a second spike, and the recovery is measured', async () => {
    const { summary, records: rs } = await run(
      await loadScenario(join(DIR, 'policy-deferred-backlog-recovery.yaml')),
    );
    const batch = card(summary).classes.batch!;
    // Everything deferred was drained and completed; nothing expired, nothing is left.
    expect(batch.deferred).toBeGreaterThan(30);
    expect(batch.drained).toBe(batch.deferred);
    expect(batch.defer_expired).toBe(0);
    expect(batch.defer_backlog).toBe(0);
    expect(summary.policy!.deferred).toEqual({ completed: batch.deferred, pending_at_end: 0 });
    // The backlog outlasts the incident and empties in the run: the last batch case ends at
    // 245.0 s (seed 1), 155 s after the slowdown ends at 90 s.
    const batchEnds = rs
      .filter((r) => r.class === 'batch' && r.useful === true)
      .map((r) => r.sent_ms + Number(r.e2e_ms));
    expect(batchEnds.length).toBe(40);
    const drainedAt = Math.max(...batchEnds);
    expect(Number.isFinite(drainedAt)).toBe(true);
    expect(drainedAt).toBeGreaterThan(150_000);
    expect(drainedAt).toBeLessThan(summary.duration_s * 1000);
    // The scorecard's recovery: one unhealthy period, while engine 0 is down (40-70 s), then one
    // recovery from its return until nothing deferred is pending and no request waits in a
    // queue. Measured 198 245 ms (seed 1): the last deferred case is fed back at 235.2 s, and
    // the interactive queue first empties after that at 268.2 s.
    const rec = card(summary).recovery;
    const returnMs = 70_000;
    expect(rec.unhealthy_periods).toBe(1);
    expect(rec.unhealthy_ms).toBe(30_000);
    expect(rec.recoveries).toBe(1);
    expect(rec.state).toBe('healthy');
    const lastMs = rec.last_ms!;
    expect(Number.isFinite(lastMs)).toBe(true);
    expect(rec.max_ms).toBe(lastMs);
    // It cannot end before the last deferred case leaves the store (the records' dispatch time),
    // and it ends within the run.
    const lastFeedMs = Math.max(
      ...rs
        .filter((r) => r.class === 'batch' && r.disposition === 'defer')
        .map((r) => r.sent_ms + Number(r.queue_wait_ms)),
    );
    expect(lastFeedMs).toBeGreaterThan(returnMs);
    expect(returnMs + lastMs).toBeGreaterThanOrEqual(lastFeedMs);
    expect(lastMs).toBeLessThan(summary.duration_s * 1000 - returnMs);
    // And it ends exactly at the first moment after that when nobody waits in a queue, found
    // independently from the records' queue waits.
    expect(returnMs + lastMs).toBeCloseTo(firstIdleAfter(rs, lastFeedMs), 0);
    // No second spike: completions of batch cases in any 30 s window stay at the pace of the
    // class's 12 seats (4 cases at a time; measured at most 9), far below what the backlog
    // would send at once.
    let maxPer30 = 0;
    for (let t = 0; t < summary.duration_s * 1000; t += 30_000)
      maxPer30 = Math.max(maxPer30, batchEnds.filter((e) => e >= t && e < t + 30_000).length);
    expect(maxPer30).toBeLessThanOrEqual(14);
    // Interactive keeps its answers while the drain runs: measured 0.72 of logical requests
    // useful on time during the drain (100 s to its end), 0.84 after it, 0.89 in the first
    // 30 s, 0.11 during the slowdown (30-90 s, the engine down for half of it).
    const during = usefulShare(rs, 'interactive', 100_000, drainedAt);
    const after = usefulShare(rs, 'interactive', drainedAt, summary.duration_s * 1000);
    const slow = usefulShare(rs, 'interactive', 30_000, 90_000);
    expect(during).toBeGreaterThan(0.63);
    expect(during).toBeGreaterThan(after - 0.15);
    expect(during).toBeGreaterThan(3 * slow);
  }, 180_000);

  it('cost underestimation: the estimator error shows it, and feedback gives interactive most of its answers back', async () => {
    const off = await loadScenario(join(DIR, 'policy-cost-underestimation.yaml'));
    const file = join(DIR, 'policies', 'cost-underestimation-feedback.yaml');
    const on: Scenario = { ...off, policy: { ...off.policy!, file, text: readFileSync(file, 'utf8') } };
    const a = await run(off);
    const b = await run(on);
    const ra = card(a.summary).classes.retrieval!;
    const rb = card(b.summary).classes.retrieval!;
    // Feedback off: every reconciled retrieval request was underestimated, by 2.8 seats on
    // average (measured -808 seats over 289); its factor stays 1.
    expect(ra.estimator.underestimated).toBe(ra.estimator.reconciled);
    expect(ra.estimator.seat_error_sum / ra.estimator.reconciled).toBeLessThan(-2);
    expect(ra.estimator.correction_factor).toBe(1);
    // Feedback on: the factor climbs to its bound (3) and the error shrinks (measured -134 over
    // 237, 99 underestimated).
    expect(rb.estimator.correction_factor).toBeGreaterThan(2);
    expect(rb.estimator.seat_error_sum / rb.estimator.reconciled).toBeGreaterThan(-1);
    expect(rb.estimator.underestimated).toBeLessThan(0.6 * rb.estimator.reconciled);
    // The harm and its repair: interactive useful on-time answers, measured 1084 with feedback
    // off, 1461 with it on (1562 with an honest envelope, not run here). The underestimating
    // tenant loses what it took: 273 useful retrieval answers off, 226 on.
    const ia = a.summary.policy!.useful_on_time.interactive!;
    const ib = b.summary.policy!.useful_on_time.interactive!;
    expect(ib).toBeGreaterThan(1.25 * ia);
    expect(b.summary.policy!.useful_on_time.retrieval!).toBeLessThan(
      a.summary.policy!.useful_on_time.retrieval!,
    );
  }, 180_000);
});
