/**
 * Seeds of a sweep or check: seed k is derived from the base seed and k alone
 * (never from the point or the worker), so every (point, seed) run is the same
 * whatever the worker count or shard.
 */

/**
 * The k-th seed from `base`: seed 0 is the base seed itself (so a sweep's
 * first seed reproduces `sluice run`); later seeds are a 32-bit hash of
 * (base, k).
 */
export function deriveSeed(base: number, k: number): number {
  if (k === 0) return base >>> 0;
  let h = (base ^ Math.imul(k, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The first `count` seeds derived from `base`. */
export function deriveSeeds(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => deriveSeed(base, k));
}
