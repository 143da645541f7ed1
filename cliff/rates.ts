/**
 * Offered-load steps of a cliff test: `A:B:STEP` or a rising list `A,B,C` (one rate alone is a
 * list of one), req/s of engine time, or the default around the scenario's own rate.
 */

/** Most steps one cliff test runs (a bound on the run's length). */
export const MAX_STEPS = 40;

/** The error of a malformed `--rates` value. */
export class RatesError extends Error {
  override readonly name = 'RatesError';
}

/**
 * Parses `A:B:STEP` into A, A+STEP, ... up to B (B included when reached, within rounding), or a
 * rising list `A,B,C` (or one rate) as given.
 * @throws RatesError naming the value and what is expected
 */
export function parseRates(text: string): number[] {
  if (!text.includes(':')) return parseList(text);
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

/** A rising list of rates `A,B,C` (one alone is fine). */
function parseList(text: string): number[] {
  const rates = text.split(',').map((p) => (p.trim() === '' ? Number.NaN : Number(p.trim())));
  if (rates.some((r) => !Number.isFinite(r)))
    throw new RatesError(`--rates: ${JSON.stringify(text)} is not A:B:STEP or a list A,B,C (numbers, req/s)`);
  if (rates.some((r, i) => !(r > 0) || (i > 0 && !(r > (rates[i - 1] as number)))))
    throw new RatesError(`--rates: ${JSON.stringify(text)} needs rates above 0, each above the one before`);
  if (rates.length > MAX_STEPS)
    throw new RatesError(`--rates: ${JSON.stringify(text)} makes more than ${MAX_STEPS} steps`);
  return rates;
}

/** The default steps: 0.5, 1, 1.5, 2 and 3 times the scenario's mean rate (rounded to 0.1). */
export function defaultRates(scenarioRate: number): number[] {
  const base = scenarioRate > 0 ? scenarioRate : 10;
  return [0.5, 1, 1.5, 2, 3].map((k) => Math.max(0.1, Math.round(base * k * 10) / 10));
}
