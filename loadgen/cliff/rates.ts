/**
 * Offered-load steps of a cliff test: `A:B:STEP` (req/s, engine time) or the default around the
 * scenario's own rate.
 */

/** Most steps one cliff test runs (a bound on the run's length). */
export const MAX_STEPS = 40;

/** The error of a malformed `--rates` value. */
export class RatesError extends Error {
  override readonly name = 'RatesError';
}

/**
 * Parses `A:B:STEP` into A, A+STEP, ... up to B (B included when reached, within rounding).
 * @throws RatesError naming the value and what is expected
 */
export function parseRates(text: string): number[] {
  const parts = text.split(':').map((p) => Number(p.trim()));
  const [a, b, step] = parts;
  if (
    parts.length !== 3 ||
    a === undefined ||
    b === undefined ||
    step === undefined ||
    parts.some((n) => !Number.isFinite(n))
  )
    throw new RatesError(`--rates: ${JSON.stringify(text)} is not A:B:STEP (numbers, req/s)`);
  if (!(a > 0) || !(b >= a) || !(step > 0))
    throw new RatesError(`--rates: ${JSON.stringify(text)} needs 0 < A <= B and STEP > 0`);
  const out: number[] = [];
  for (let i = 0; ; i++) {
    const r = Math.round((a + i * step) * 1000) / 1000;
    if (r > b + 1e-9) break;
    out.push(r);
    if (out.length > MAX_STEPS)
      throw new RatesError(`--rates: ${JSON.stringify(text)} makes more than ${MAX_STEPS} steps`);
  }
  return out;
}

/** The default steps: 0.5, 1, 1.5, 2 and 3 times the scenario's mean rate (rounded to 0.1). */
export function defaultRates(scenarioRate: number): number[] {
  const base = scenarioRate > 0 ? scenarioRate : 10;
  return [0.5, 1, 1.5, 2, 3].map((k) => Math.max(0.1, Math.round(base * k * 10) / 10));
}
