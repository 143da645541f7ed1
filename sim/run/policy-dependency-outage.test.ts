/**
 * A dependency outage behind the policy (scenarios/policy-dependency-outage.yaml): the tool service
 * the work-order class depends on is open from 60 s to 120 s. Asserts what the run measures
 * (seed 1): every work-order attempt sent in the window is rejected with dependency_open (503), and
 * none outside it; the scorecard counts them; the classes that do not depend on tools (interactive,
 * and batch, whose document store stays closed) get no dependency_open and keep their useful
 * on-time answers; work-orders are served again after the window. The figures in the comments are
 * measured.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const FILE = join(REPO_ROOT, 'scenarios', 'policy-dependency-outage.yaml');
const OUTAGE_MS = [60_000, 120_000] as const;

interface ClassCard {
  rejected_by_reason: Record<string, number>;
}

const inWindow = (r: RequestRecord): boolean => r.sent_ms >= OUTAGE_MS[0] && r.sent_ms < OUTAGE_MS[1];

/** Useful on-time answers of `cls` per logical request, over the attempts sent in [fromMs, toMs). */
function usefulShare(rs: readonly RequestRecord[], cls: string, fromMs: number, toMs: number): number {
  const sel = rs.filter((r) => r.class === cls && r.sent_ms >= fromMs && r.sent_ms < toMs);
  return sel.filter((r) => r.useful === true).length / new Set(sel.map((r) => r.logical_id)).size;
}

describe('policy: a dependency outage', () => {
  it('rejects the dependent class with dependency_open during the window only; the other classes are unaffected', async () => {
    const sink = new MemorySink(true);
    const summary: RunSummary = await runScenario(await loadScenario(FILE), { sink });
    expect(summary.conservation_ok).toBe(true);
    const rs = sink.requests;
    const card = summary.policy!.scorecard as { classes: Record<string, ClassCard> };

    // The window: every work-order attempt sent in it is refused at once with the honest reason.
    // Measured: 91 attempts (31 intents, up to 3 attempts each), all dependency_open, 503.
    const wo = rs.filter((r) => r.class === 'work-order');
    const during = wo.filter(inWindow);
    expect(during.length).toBeGreaterThan(60);
    for (const r of during)
      expect([r.disposition, r.reason, r.status]).toEqual(['reject', 'dependency_open', 503]);
    // Outside it, none: before, work-orders are admitted or queued (measured 30 of 32 attempts; 2
    // deadline_impossible), and after it they are served again (60 of 68 attempts admitted or queued).
    const outside = wo.filter((r) => !inWindow(r));
    expect(outside.filter((r) => r.reason === 'dependency_open')).toEqual([]);
    const served = (r: RequestRecord): boolean => r.disposition === 'admit' || r.disposition === 'queue';
    const before = outside.filter((r) => r.sent_ms < OUTAGE_MS[0]);
    const after = outside.filter((r) => r.sent_ms >= OUTAGE_MS[1]);
    expect(before.filter(served).length).toBeGreaterThan(0.85 * before.length);
    expect(after.filter(served).length).toBeGreaterThan(0.75 * after.length);
    // Measured: work-order useful on-time share 1.00 of the intents sent before the window, 0.00 in
    // it, 0.92 after it.
    expect(usefulShare(rs, 'work-order', 10_000, OUTAGE_MS[0])).toBeGreaterThan(0.9);
    expect(usefulShare(rs, 'work-order', OUTAGE_MS[0], OUTAGE_MS[1])).toBeLessThan(0.1);
    expect(usefulShare(rs, 'work-order', OUTAGE_MS[1], 240_000)).toBeGreaterThan(0.85);

    // Counted in the scorecard: the host's reject reasons (whole run) and the clients' (measured window).
    expect(card.classes['work-order']!.rejected_by_reason.dependency_open).toBe(during.length);
    const classes = Object.fromEntries((summary.classes ?? []).map((c) => [c.class, c]));
    expect(classes['work-order']!.reject_reasons.dependency_open).toBe(during.length);

    // The other classes: no dependency_open, and their useful on-time answers hold through the
    // window. Measured interactive: 0.97 before, 0.99 during, 0.96 after; batch: 1.00 before and during.
    for (const cls of ['interactive', 'batch']) {
      expect(rs.filter((r) => r.class === cls && r.reason === 'dependency_open')).toEqual([]);
      expect(card.classes[cls]!.rejected_by_reason.dependency_open).toBe(0);
    }
    const iBefore = usefulShare(rs, 'interactive', 10_000, OUTAGE_MS[0]);
    expect(iBefore).toBeGreaterThan(0.9);
    expect(usefulShare(rs, 'interactive', OUTAGE_MS[0], OUTAGE_MS[1])).toBeGreaterThan(0.97 * iBefore);
    expect(usefulShare(rs, 'batch', OUTAGE_MS[0], OUTAGE_MS[1])).toBeGreaterThan(0.9);
    const batchDuring = rs.filter((r) => r.class === 'batch' && inWindow(r));
    expect(batchDuring.length).toBeGreaterThan(5);
    expect(batchDuring.filter((r) => r.disposition === 'reject')).toEqual([]);

    // The summary's dependency figures: tools open once for the 60 s, the document store never.
    expect(summary.policy!.dependencies).toEqual({
      tools: { opened: 1, open_ms: 60_000 },
      'document-store': { opened: 0, open_ms: 0 },
    });
  }, 120_000);
});
