import { describe, expect, it } from 'vitest';
import { lateness, latenessText, MAX_LATE_SHARE } from '../loadgen/driver/lag.js';
import { fidelityVerdict, targetCheck, type VerdictInput, verdictText } from './verdict.js';

/** A run that kept its schedule and offered the simulated requests, with these differences. */
function run(diffs: {
  goodput?: number | null;
  sheds?: number | null;
  ttft_p95?: number | null;
}): VerdictInput {
  return {
    targets: {
      goodput: targetCheck(0.05, diffs.goodput === undefined ? 0.01 : diffs.goodput),
      sheds: targetCheck(0.05, diffs.sheds === undefined ? -0.02 : diffs.sheds),
      ttft_p95: targetCheck(0.15, diffs.ttft_p95 === undefined ? 0.1 : diffs.ttft_p95),
    },
    real_run: { sends: 2000, late_sends: 3, schedule_lag_p99_ms: 2 },
    schedule_check: { equal: true, mismatch_count: 0 },
  };
}

describe('fidelityVerdict', () => {
  it('is met when every difference is within its target', () => {
    const v = fidelityVerdict(run({}));
    expect(v.status).toBe('met');
    expect(v.missed).toEqual([]);
    expect(verdictText(v)).toBe('verdict: every target met');
  });

  it('is missed, naming the figure, its difference and its target, when refusals are 17.2 % high', () => {
    const v = fidelityVerdict(run({ sheds: 0.172 }));
    expect(v.status).toBe('missed');
    expect(v.missed).toEqual(['refusals +17.2 % vs ±5 %']);
    expect(verdictText(v)).toBe('verdict: MISSED: refusals +17.2 % vs ±5 %');
  });

  it('counts an undefined difference (simulated 0, real not) as missed', () => {
    const v = fidelityVerdict(run({ sheds: null }));
    expect(v.status).toBe('missed');
    expect(v.missed[0]).toMatch(/^refusals undefined \(simulated 0, real not\)/);
  });

  it('is invalid, judging no target, when the driver sent more than 1 % of its requests late', () => {
    const r = run({ sheds: 0.172 });
    r.real_run = { sends: 2000, late_sends: 745, schedule_lag_p99_ms: 412 };
    const v = fidelityVerdict(r);
    expect(v.status).toBe('invalid');
    expect(v.missed).toEqual([]);
    expect(v.invalid).toEqual([
      'the driver fell behind: 745 of 2000 sends (37.3 %) late, above the 1.0 % bound',
    ]);
    expect(verdictText(v)).toMatch(/^verdict: INVALID, targets not judged: the driver fell behind/);
  });

  it('is invalid when the two runs did not offer the same requests', () => {
    const r = run({});
    r.schedule_check = { equal: false, mismatch_count: 4 };
    expect(fidelityVerdict(r).invalid).toEqual([
      'the real run did not offer the simulated requests (4 differ)',
    ]);
  });

  it('holds the run to a configured lateness bound', () => {
    const r = run({});
    r.real_run.late_sends = 100; // 5 %
    expect(fidelityVerdict(r).status).toBe('invalid');
    expect(fidelityVerdict(r, { maxLateShare: 0.1 }).status).toBe('met');
  });
});

describe('lateness', () => {
  it('is valid at the bound and invalid above it', () => {
    expect(MAX_LATE_SHARE).toBe(0.01);
    expect(lateness({ sends: 1000, late_sends: 10, lag_p99_ms: 5 }).valid).toBe(true);
    const over = lateness({ sends: 1000, late_sends: 11, lag_p99_ms: 15 });
    expect(over.valid).toBe(false);
    expect(latenessText(over)).toBe(
      '11 of 1000 sends (1.1 %) late by > 10 ms (lag p99 15 ms), above the 1 % bound',
    );
  });
  it('allows a handful of late sends on a short run (a GC pause)', () => {
    expect(lateness({ sends: 100, late_sends: 5, lag_p99_ms: 30 }).valid).toBe(true);
    expect(lateness({ sends: 100, late_sends: 6, lag_p99_ms: 30 }).valid).toBe(false);
  });
  it('is valid with no sends', () => {
    expect(lateness({ sends: 0, late_sends: 0, lag_p99_ms: 0 })).toMatchObject({
      late_share: 0,
      valid: true,
    });
  });
});
