/**
 * Piecewise-linear arrival-rate profiles and exact sampling of the non-homogeneous Poisson process they
 * define, by time rescaling: with E ~ Exp(1), the next arrival after t is the s where
 * Λ(s) − Λ(t) = E, and Λ (the integral of the rate) is piecewise quadratic, so s has a closed form.
 * One RNG draw per arrival.
 */
import { exponential, type RandomFn } from './rng.js';

/** A stretch of time in which the rate moves linearly. */
export interface RateSegment {
  /** Start of the segment, ms. */
  startMs: number;
  /** End of the segment (exclusive), ms; may be `Infinity` for the last segment. */
  endMs: number;
  /** Rate at `startMs`, requests per second (>= 0). */
  startRatePerSec: number;
  /** Rate at `endMs`, requests per second (>= 0); equal to `startRatePerSec` on an infinite segment. */
  endRatePerSec: number;
}

/** A rate profile: contiguous, time-ordered segments. The process ends after the last segment. */
export type RateProfile = readonly RateSegment[];

/** Rate at time `tMs` in requests per second (0 outside the profile). */
export function rateAt(profile: RateProfile, tMs: number): number {
  for (const s of profile) {
    if (tMs >= s.startMs && tMs < s.endMs) return segmentRateAt(s, tMs);
  }
  return 0;
}

/** Expected number of arrivals in [fromMs, toMs): the integral of the rate. */
export function expectedCount(profile: RateProfile, fromMs: number, toMs: number): number {
  let total = 0;
  for (const s of profile) {
    const a = Math.max(fromMs, s.startMs);
    const b = Math.min(toMs, s.endMs);
    if (b > a) total += ((segmentRateAt(s, a) + segmentRateAt(s, b)) / 2) * ((b - a) / 1000);
  }
  return total;
}

function segmentRateAt(s: RateSegment, tMs: number): number {
  if (s.endMs === Number.POSITIVE_INFINITY || s.startRatePerSec === s.endRatePerSec) return s.startRatePerSec;
  return (
    s.startRatePerSec + ((s.endRatePerSec - s.startRatePerSec) * (tMs - s.startMs)) / (s.endMs - s.startMs)
  );
}

/**
 * Time of the first arrival after `fromMs` (ms), or undefined when the profile ends first.
 * Exact inversion of the cumulative rate; draws one Exp(1) variate.
 */
export function nextArrivalMs(profile: RateProfile, fromMs: number, rng: RandomFn): number | undefined {
  let mass = exponential(rng, 1);
  for (const s of profile) {
    if (s.endMs <= fromMs) continue;
    const u = Math.max(fromMs, s.startMs);
    const r0 = segmentRateAt(s, u) / 1000;
    const slope =
      s.endMs === Number.POSITIVE_INFINITY
        ? 0
        : (s.endRatePerSec - s.startRatePerSec) / 1000 / (s.endMs - s.startMs);
    const span = s.endMs - u;
    const segMass =
      span === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : r0 * span + (slope * span * span) / 2;
    if (mass <= segMass) {
      // Solve r0·x + slope·x²/2 = mass, in the cancellation-free form.
      const x = (2 * mass) / (r0 + Math.sqrt(Math.max(0, r0 * r0 + 2 * slope * mass)));
      if (!Number.isFinite(x)) return undefined;
      return Math.min(u + x, s.endMs);
    }
    mass -= segMass;
  }
  return undefined;
}
