import { describe, expect, it } from 'vitest';
import { runClosedLoop } from './closed-loop.js';
import { FRONTEND_RHO_MAX, frontendDelayMs } from './frontend.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';

/** The built-in profile with a constant frontend delay. */
const h100 = { ...DEPLOYMENT_PROFILES['llama-3.1-8b-h100'], frontendPerTokenMs: 0 };
// Lengths spread as a real dataset's are, so the clients do not finish in lockstep.
const spec = (c: number) => ({
  concurrency: c,
  requests: 20 * c,
  promptTokens: Array.from({ length: 64 }, (_, i) => 200 + ((i * 37) % 112)),
  outputTokens: Array.from({ length: 64 }, (_, i) => 96 + ((i * 53) % 64)),
});

describe('the frontend delay under load', () => {
  it('is the idle delay with no load term or no stream, and base / (1 - rho) with both', () => {
    expect(frontendDelayMs(4, 0, 2)).toBe(4);
    expect(frontendDelayMs(4, 0.5, 0)).toBe(4);
    // 0.25 ms per token at 2 tokens/ms: half the process, twice the delay.
    expect(frontendDelayMs(4, 0.25, 2)).toBeCloseTo(8, 12);
  });

  it('holds rho at its cap rather than growing without bound as the stream saturates the frontend', () => {
    const capped = 4 / (1 - FRONTEND_RHO_MAX);
    expect(frontendDelayMs(4, 1, 0.95)).toBeCloseTo(capped, 12);
    expect(frontendDelayMs(4, 10, 10)).toBeCloseTo(capped, 12);
    expect(Number.isFinite(frontendDelayMs(4, 1e9, 1e9))).toBe(true);
  });

  it('lengthens TTFT where the engine streams many tokens and leaves a lone request nearly alone', () => {
    const loaded = { ...h100, frontendPerTokenMs: 0.5 };
    const c1 = [runClosedLoop(h100, spec(1)), runClosedLoop(loaded, spec(1))];
    const c16 = [runClosedLoop(h100, spec(16)), runClosedLoop(loaded, spec(16))];
    // c = 1 streams ~0.15 tokens/ms: rho ~ 0.08, well under a millisecond more.
    expect((c1[1]?.ttftP50Ms as number) - (c1[0]?.ttftP50Ms as number)).toBeLessThan(1);
    // c = 16 streams ~1.4 tokens/ms: rho ~ 0.7, the 4 ms frontend becomes ~13 ms.
    expect((c16[1]?.ttftP50Ms as number) - (c16[0]?.ttftP50Ms as number)).toBeGreaterThan(5);
    // The term delays requests on their way in; the step time, so TPOT, is the engine's.
    expect(Math.abs((c16[1]?.tpotP50Ms as number) / (c16[0]?.tpotP50Ms as number) - 1)).toBeLessThan(0.05);
  });
});
