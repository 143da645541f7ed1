/**
 * Fidelity: the comparison helpers, and a short real comparison of the M/M/c/K check (one M/M/8
 * engine behind the gate, ceiling 8, depth 8) at duration scale 0.1 and time scale 10: 30 s of
 * engine time in about 3 s, on loopback. Asserts the structure (both runs complete, the JSON keys,
 * the same arrivals, nothing left in flight, no anomalies) and only the targets that hold reliably
 * on a loaded 2-core machine; the measured differences are printed. A second short run goes
 * through the SMG-shaped gateway (LLM engines, 6 s).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../sim/run/records.js';
import { loadScenario } from '../sim/scenario/load.js';
import { checkSchedule, relDiff } from './compare.js';
import { runFidelity } from './fidelity.js';

const MMCK = fileURLToPath(new URL('../scenarios/mmck-check.yaml', import.meta.url));
const SMG = fileURLToPath(new URL('../scenarios/smg-dialect.yaml', import.meta.url));

describe('relDiff', () => {
  it('is signed (real - simulated) / simulated', () => {
    expect(relDiff(110, 100)).toBe(0.1);
    expect(relDiff(90, 100)).toBe(-0.1);
  });
  it('is 0 when both are 0 and null when only the simulated value is', () => {
    expect(relDiff(0, 0)).toBe(0);
    expect(relDiff(3, 0)).toBeNull();
  });
});

describe('checkSchedule', () => {
  const rec = (id: number, sent: number, extra: Partial<RequestRecord> = {}): RequestRecord =>
    ({
      id,
      logical_id: id,
      attempt: 1,
      tenant: 'keyless',
      sent_ms: sent,
      protocol: 'http1',
      stream: true,
      inference: true,
      prompt_tokens: 10,
      output_tokens: 5,
      ...extra,
    }) as RequestRecord;
  it('matches scaled send times and request shapes', () => {
    const c = checkSchedule([rec(1, 100), rec(2, 250)], [rec(1, 10), rec(2, 25)], 10);
    expect(c.equal).toBe(true);
  });
  it('names the requests that differ', () => {
    const c = checkSchedule([rec(1, 100), rec(2, 250)], [rec(1, 10), rec(2, 25, { output_tokens: 6 })], 10);
    expect(c.equal).toBe(false);
    expect(c.mismatches).toEqual([2]);
  });
});

describe('a short real comparison (loopback, time scale 5)', () => {
  it('runs both sides on the same arrivals and reports the differences', async () => {
    const r = await runFidelity(await loadScenario(MMCK), { durationScale: 0.1, timeScale: 5 });
    for (const k of [
      'goodput_rel_diff',
      'sheds_rel_diff',
      'ttft_p50_rel_diff',
      'ttft_p95_rel_diff',
      'queue_wait_p95_rel_diff',
      'simulated',
      'real',
    ])
      expect(r).toHaveProperty(k);
    expect(r.schedule_check.equal).toBe(true);
    expect(r.simulated.offered).toBeGreaterThan(150);
    expect(r.real.offered).toBe(r.simulated.offered);
    expect(r.real.conservation_ok).toBe(true);
    expect(r.real.outcomes.completed).toBeGreaterThan(0);
    expect(r.real_run.inflight_after).toBe(0);
    expect(r.real_run.queued_after).toBe(0);
    expect(r.real_run.anomalies).toBe(0);
    expect(r.real.outcomes.failed ?? 0).toBe(0);
    // Goodput holds within the 5 % target run after run here; refusals (about 20) and TTFT move
    // with the emulator's timer jitter, magnified 5 times: only a loose bound is asserted. (At
    // time scale 10 goodput came out 5.8 % low with another process holding a CPU; at 5 it was
    // 2.6 % low beside a busy loop.)
    expect(Math.abs(r.goodput_rel_diff ?? 1)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(r.ttft_p95_rel_diff ?? 1)).toBeLessThanOrEqual(0.3);
    console.log(
      'fidelity mmck-check x0.1 @5:',
      JSON.stringify({
        goodput: r.goodput_rel_diff,
        sheds: r.sheds_rel_diff,
        ttft_p50: r.ttft_p50_rel_diff,
        ttft_p95: r.ttft_p95_rel_diff,
        queue_wait_p95: r.queue_wait_p95_rel_diff,
        wall_s: r.real_run.wall_s,
      }),
    );
  }, 40_000);
});

describe('a short real comparison through the SMG-shaped gateway', () => {
  it('runs an SMG-dialect scenario (LLM engines, streamed) on the same arrivals with nothing left behind', async () => {
    const r = await runFidelity(await loadScenario(SMG), { durationScale: 0.05, timeScale: 0.25 });
    expect(r.schedule_check.equal).toBe(true);
    expect(r.real.dialect).toBe('smg');
    expect(r.real.offered).toBe(r.simulated.offered);
    expect(r.real.conservation_ok).toBe(true);
    expect(r.real.outcomes.completed).toBeGreaterThan(30);
    expect(r.real.outcomes.failed ?? 0).toBe(0);
    expect(r.real_run.inflight_after).toBe(0);
    expect(r.real_run.queued_after).toBe(0);
    expect(r.real_run.anomalies).toBe(0);
    // About 170 requests in 24 s, in slow motion (x0.25) as the LLM scenarios are measured. With
    // another process holding a CPU the real side fell behind at faster scales (x1: goodput
    // 31 % low in a loaded test run, 23 completions beside a busy loop; x0.5: 25 % low beside a
    // busy loop); at x0.25 it stayed within 3 %. A loose bound all the same (the measured runs
    // are in docs/cliff-and-fidelity.md).
    expect(Math.abs(r.goodput_rel_diff ?? 1)).toBeLessThanOrEqual(0.15);
    console.log(
      'fidelity smg-dialect x0.05 @0.25:',
      JSON.stringify({
        goodput: r.goodput_rel_diff,
        ttft_p95: r.ttft_p95_rel_diff,
        wall_s: r.real_run.wall_s,
      }),
    );
  }, 60_000);
});
