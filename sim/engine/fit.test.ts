import { describe, expect, it } from 'vitest';
import type { StepTimePoint } from './fit.js';
import { fitStepTime, leastSquares } from './fit.js';
import { fittedStepTime } from './step-time.js';

describe('fitStepTime', () => {
  it('recovers known coefficients from noiseless measured steps', () => {
    const truth = { a: 0.8, b: 0.036, c: 0.005, d: 3.2e-5 };
    const f = fittedStepTime(truth);
    const shapes = [
      [1, 1, 500],
      [16, 16, 8000],
      [64, 64, 40_000],
      [2048, 1, 0],
      [512, 200, 90_000],
      [8192, 40, 300_000],
    ] as const;
    const points: StepTimePoint[] = shapes.map(([numTokens, numSeqs, contextTokens]) => {
      const batch = { numTokens, numSeqs, contextTokens };
      return {
        batch,
        stepMs: f({ ...batch, numPrefillTokens: 0, numDecodeSeqs: 0, prefillAttentionTokens2: 0 }),
      };
    });
    const got = fitStepTime(points);
    expect(got.a).toBeCloseTo(truth.a, 9);
    expect(got.b).toBeCloseTo(truth.b, 9);
    expect(got.c).toBeCloseTo(truth.c, 9);
    expect(got.d).toBeCloseTo(truth.d, 12);
  });

  it('gives the least-squares line through noisy points', () => {
    // y = 1 + 2x with residuals +1, -1, -1, +1 at x = 0..3: those cancel in both normal equations.
    const x = leastSquares(
      [
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      [2, 2, 4, 8],
    );
    expect(x[0]).toBeCloseTo(1, 12);
    expect(x[1]).toBeCloseTo(2, 12);
  });

  it('refuses too few points and collinear ones', () => {
    expect(() => leastSquares([[1, 2]], [1])).toThrow(RangeError);
    expect(() =>
      leastSquares(
        [
          [1, 2],
          [2, 4],
          [3, 6],
        ],
        [1, 2, 3],
      ),
    ).toThrow(/collinear/);
  });
});
