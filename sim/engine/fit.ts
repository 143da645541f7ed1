/**
 * Least-squares fit of the linear step-time model (`fittedStepTime`) from measured steps.
 */
import type { BatchShape, FittedCoefficients } from './step-time.js';

/** One measured engine step. */
export interface StepTimePoint {
  readonly batch: Pick<BatchShape, 'numTokens' | 'numSeqs' | 'contextTokens'>;
  /** Measured step duration, ms. */
  readonly stepMs: number;
}

/**
 * Ordinary least squares: the x minimising |A·x − y|², by the normal equations (on
 * column-scaled A) and Gauss–Jordan elimination with partial pivoting.
 * @param rows the design matrix A, one row per observation
 * @throws RangeError when there are fewer rows than columns or the columns are collinear
 */
export function leastSquares(rows: readonly (readonly number[])[], y: readonly number[]): number[] {
  const k = rows[0]?.length ?? 0;
  if (rows.length < k || rows.length !== y.length || k === 0) {
    throw new RangeError(`Need at least ${k} observations with matching targets, got ${rows.length}`);
  }
  // Columns are scaled to max |value| 1 first: N, |S| and C differ by orders of magnitude.
  const colScale = Array.from(
    { length: k },
    (_, j) => Math.max(...rows.map((row) => Math.abs(row[j] as number))) || 1,
  );
  // Augmented normal matrix [AᵀA | Aᵀy].
  const m: number[][] = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  rows.forEach((row, r) => {
    for (let i = 0; i < k; i++) {
      const mi = m[i] as number[];
      const ai = (row[i] as number) / (colScale[i] as number);
      for (let j = 0; j < k; j++)
        mi[j] = (mi[j] as number) + (ai * (row[j] as number)) / (colScale[j] as number);
      mi[k] = (mi[k] as number) + ai * (y[r] as number);
    }
  });
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let r = col + 1; r < k; r++) {
      if (Math.abs(m[r]?.[col] as number) > Math.abs(m[pivot]?.[col] as number)) pivot = r;
    }
    const scale = Math.max(...m.map((row) => Math.abs(row[col] as number)), 1e-300);
    if (Math.abs(m[pivot]?.[col] as number) <= 1e-12 * scale) {
      throw new RangeError(`Observations do not determine coefficient ${col} (collinear columns)`);
    }
    [m[col], m[pivot]] = [m[pivot] as number[], m[col] as number[]];
    const pr = m[col] as number[];
    for (let r = 0; r < k; r++) {
      if (r === col) continue;
      const rr = m[r] as number[];
      const f = (rr[col] as number) / (pr[col] as number);
      for (let j = col; j <= k; j++) rr[j] = (rr[j] as number) - f * (pr[j] as number);
    }
  }
  return m.map((row, i) => (row[k] as number) / (row[i] as number) / (colScale[i] as number));
}

/** Fits step_ms = a + b·N + c·|S| + d·C to measured steps (at least 4, not collinear). */
export function fitStepTime(points: readonly StepTimePoint[]): FittedCoefficients {
  const rows = points.map((p) => [1, p.batch.numTokens, p.batch.numSeqs, p.batch.contextTokens]);
  const [a, b, c, d] = leastSquares(
    rows,
    points.map((p) => p.stepMs),
  ) as [number, number, number, number];
  return { a, b, c, d };
}
