/**
 * The profiles against published vLLM sweeps: every claimed figure within its tolerance
 * (TPOT p50 15%, TTFT p50 30%, output tokens/s 15%). A change to the step-time model or a
 * profile that moves a figure outside its tolerance fails here; docs/engine-fidelity.md
 * (`npm run fidelity:engines`) shows the same table.
 */
import { describe, expect, it } from 'vitest';
import { runClosedLoop } from './closed-loop.js';
import { evaluateAll, evaluateSweep } from './fidelity.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';
import { PUBLISHED_SWEEPS } from './published.js';

const all = evaluateAll();

describe('engine fidelity against published sweeps', () => {
  for (const { sweep, rows } of all) {
    for (const r of rows.filter((x) => x.claimed)) {
      it(`${sweep.profile} c=${r.concurrency} ${r.metric}: published ${r.published}, within ±${r.tolerance * 100}%`, () => {
        expect(Math.abs(r.relError), `simulated ${r.simulated}`).toBeLessThanOrEqual(r.tolerance);
      });
    }
  }

  it('covers three deployments, and llama-3.1-8b-h100 claims TPOT at c = 1, 4, 16 and 64', () => {
    expect(new Set(PUBLISHED_SWEEPS.map((s) => s.profile)).size).toBeGreaterThanOrEqual(3);
    const h100 = all.find((s) => s.sweep.profile === 'llama-3.1-8b-h100')?.rows ?? [];
    const tpot = h100.filter((r) => r.claimed && r.metric === 'tpot_p50_ms').map((r) => r.concurrency);
    expect(tpot).toEqual([1, 4, 16, 64]);
  });

  it('every figure not claimed says why', () => {
    for (const { rows } of all)
      for (const r of rows.filter((x) => !x.claimed)) expect(r.why?.length ?? 0).toBeGreaterThan(40);
  });

  it('TPOT grows with concurrency: the step time is not flat in the batch', () => {
    const h100 = all.find((s) => s.sweep.profile === 'llama-3.1-8b-h100')?.rows ?? [];
    const tpot = h100.filter((r) => r.metric === 'tpot_p50_ms').map((r) => r.simulated);
    expect(tpot[3]).toBeGreaterThan((tpot[0] as number) * 5);
  });

  it('the same seed gives the same figures; another seed moves them but stays within tolerance', () => {
    const sweep = PUBLISHED_SWEEPS[0];
    if (sweep === undefined) throw new Error('no sweep');
    expect(evaluateSweep(sweep, 1)).toEqual(all[0]?.rows);
    const other = evaluateSweep(sweep, 2);
    expect(other.map((r) => r.simulated)).not.toEqual(all[0]?.rows.map((r) => r.simulated));
    for (const r of other.filter((x) => x.claimed))
      expect(Math.abs(r.relError)).toBeLessThanOrEqual(r.tolerance);
  });

  it('with fixed lengths, the seeded jitter spreads TTFT and TPOT: p99 is not p50', () => {
    const p = DEPLOYMENT_PROFILES['llama-3.1-8b-h100'];
    const r = runClosedLoop(p, { concurrency: 4, requests: 80, promptTokens: [256], outputTokens: [128] }, 1);
    expect(r.ttftP99Ms).toBeGreaterThan(r.ttftP50Ms * 1.02);
    expect(r.tpotP99Ms).toBeGreaterThan(r.tpotP50Ms);
  });
});
