/**
 * The essay's queue-store failure cliff behind the worked example's policy
 * (scenarios/policy-queue-store-failure.yaml): the defer store is down from 60 s to 120 s. Asserts
 * what the run measures (seed 1): batch work the store cannot take is refused with its reason,
 * not accepted and lost; the drain waits for the store and then empties what was deferred
 * before; interactive keeps its useful on-time answers. The figures in the comments are measured.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DeferStoreSnapshot } from '../../gate/index.js';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const FILE = join(REPO_ROOT, 'scenarios', 'policy-queue-store-failure.yaml');
const OUTAGE_MS = [60_000, 120_000] as const;

/** The part of the host's scorecard this test reads. */
interface BatchCard {
  deferred: number;
  drained: number;
  defer_expired: number;
  defer_backlog: number;
  defer_store_failures: number;
  rejected_by_reason: Record<string, number>;
  tenants: Record<string, { deferred: number; rejected: number; completed: number }>;
}
interface Card {
  classes: Record<string, BatchCard>;
  defer_store: DeferStoreSnapshot;
}

/** Useful on-time answers of `cls` per logical request sent in [fromMs, toMs). */
function usefulShare(rs: readonly RequestRecord[], cls: string, fromMs: number, toMs: number): number {
  const sel = rs.filter((r) => r.class === cls && r.sent_ms >= fromMs && r.sent_ms < toMs);
  return sel.filter((r) => r.useful === true).length / new Set(sel.map((r) => r.logical_id)).size;
}

/** When a deferred attempt was fed back: sent plus its time held in the store. */
const fedBackAt = (r: RequestRecord): number => r.sent_ms + (r.queue_wait_ms === '' ? 0 : r.queue_wait_ms);

describe('policy cliffs: queue-store failure', () => {
  it('a defer store down for a minute: batch refused with its reason, the earlier backlog drained after, interactive on time', async () => {
    const sink = new MemorySink(true);
    const summary: RunSummary = await runScenario(await loadScenario(FILE), { sink });
    expect(summary.conservation_ok).toBe(true);
    const rs = sink.requests;
    const card = summary.policy!.scorecard as Card;
    const batch = card.classes.batch!;

    // Refused honestly: the second tenant's cases, arriving while the store is down, are never
    // deferred; each refusal is a class_capacity reject counted as a store failure (the host
    // answers those without a Retry-After: recovery unknown). Measured: 84 rejects (28 cases × 3).
    const ops = rs.filter((r) => r.tenant === 'eval-ops');
    expect(ops.every((r) => r.sent_ms >= OUTAGE_MS[0] && r.sent_ms < OUTAGE_MS[1])).toBe(true);
    expect(ops.some((r) => r.disposition === 'defer')).toBe(false);
    const refused = ops.filter((r) => r.disposition === 'reject');
    expect(refused.length).toBeGreaterThan(40);
    for (const r of refused) expect([r.reason, r.status]).toEqual(['class_capacity', 503]);
    expect(batch.rejected_by_reason.class_capacity).toBe(refused.length);
    expect(batch.defer_store_failures).toBe(refused.length);
    expect(card.defer_store.refused_defers).toBe(refused.length);
    // The drain met the dead store on every tick and stopped, not crashed (measured: 600 stops).
    expect(card.defer_store.stopped_drains).toBeGreaterThan(100);
    expect(card.defer_store.unrecorded_ends).toBe(0);
    // summary.json carries the store figures beside the scorecard too (printed by `sluice run`).
    expect(summary.policy!.defer_store).toEqual(card.defer_store);

    // Not lost: what was deferred before the outage waits it out, then drains and completes.
    // Measured: 38 deferred, 11 fed back before 60 s, none during the outage, 27 after it.
    const lab = rs.filter((r) => r.tenant === 'eval-lab' && r.disposition === 'defer');
    expect(lab.length).toBe(batch.deferred);
    expect(batch.deferred).toBeGreaterThan(30);
    expect(lab.filter((r) => fedBackAt(r) >= OUTAGE_MS[0] && fedBackAt(r) < OUTAGE_MS[1])).toEqual([]);
    expect(lab.filter((r) => fedBackAt(r) >= OUTAGE_MS[1]).length).toBeGreaterThan(20);
    expect(lab.every((r) => r.outcome === 'completed')).toBe(true);
    expect(batch.drained).toBe(batch.deferred);
    expect(batch.defer_expired).toBe(0);
    expect(batch.defer_backlog).toBe(0);
    expect(summary.policy!.deferred).toEqual({ completed: batch.deferred, pending_at_end: 0 });

    // Interactive keeps its useful on-time answers through the outage. Measured: 0.73 of the
    // requests sent in 10-60 s, 0.81 in 60-120 s, 0.75 in 120-180 s.
    const before = usefulShare(rs, 'interactive', 10_000, OUTAGE_MS[0]);
    const during = usefulShare(rs, 'interactive', OUTAGE_MS[0], OUTAGE_MS[1]);
    expect(during).toBeGreaterThan(0.7);
    expect(during).toBeGreaterThan(0.95 * before);
    expect(usefulShare(rs, 'interactive', OUTAGE_MS[1], 180_000)).toBeGreaterThan(0.7);
  }, 120_000);
});
