import { describe, expect, it } from 'vitest';
import { pair } from '../fidelity/compare.js';
import type { FidelityResult } from '../fidelity/fidelity.js';
import { fidelityVerdict, targetCheck } from '../fidelity/verdict.js';
import { fidelityExitCode, fidelityText } from './fidelity.js';

/** A result whose refusals are 17.2 % above the simulator's; `lateSends` of 1000 sends late. */
function result(lateSends: number): FidelityResult {
  const r = {
    scenario: 'mmck-check',
    seed: 1,
    duration_scale: 0.1,
    time_scale: 5,
    figures: { goodput_rps: pair(10, 10.1), sheds: pair(29, 34) },
    sheds_by_reason: {},
    targets: {
      goodput: targetCheck(0.05, 0.01),
      sheds: targetCheck(0.05, 0.172),
      ttft_p95: targetCheck(0.15, 0.02),
    },
    schedule_check: {
      simulated: 1000,
      real: 1000,
      mismatches: [],
      mismatch_count: 0,
      max_send_diff_ms: 0,
      equal: true,
    },
    real_run: {
      wall_s: 3,
      sends: 1000,
      late_sends: lateSends,
      schedule_lag_p99_ms: 1,
      engine_lag_max_ms: 1,
      transport_errors: {},
      inflight_after: 0,
      queued_after: 0,
      anomalies: 0,
    },
    notes: [],
  } as unknown as FidelityResult;
  r.verdict = fidelityVerdict(r);
  return r;
}

describe('sluice fidelity exit codes', () => {
  it('exits 0 when every target is met, 1 when one is missed, 3 when the run is invalid', () => {
    expect(fidelityExitCode('met')).toBe(0);
    expect(fidelityExitCode('missed')).toBe(1);
    expect(fidelityExitCode('invalid')).toBe(3);
  });

  it('exits 1 on a run whose refusals missed their target, and says so', () => {
    const r = result(2);
    expect(fidelityExitCode(r.verdict.status)).toBe(1);
    const text = fidelityText(r);
    expect(text).toContain('refusals missed (+17.2 % vs ±5 %)');
    expect(text).toContain('verdict: MISSED: refusals +17.2 % vs ±5 %');
  });

  it('exits 3 and judges no target when the driver fell behind', () => {
    const r = result(200);
    expect(fidelityExitCode(r.verdict.status)).toBe(3);
    const text = fidelityText(r);
    expect(text).toContain('refusals not judged (+17.2 % vs ±5 %)');
    expect(text).toContain('verdict: INVALID, targets not judged: the driver fell behind: 200 of 1000 sends');
  });
});
