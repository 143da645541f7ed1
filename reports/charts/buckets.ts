/**
 * Time bucketing of per-second rows for charts of long runs: a run of an
 * hour still draws about `maxPoints` points per series.
 */
import type { SecondRow } from '../../sim/run/records.js';

/** One bucket of consecutive seconds. */
export interface Bucket {
  /** Start of the bucket (s). */
  t_s: number;
  /** Seconds in it. */
  seconds: number;
  rows: SecondRow[];
}

/** Splits rows (in time order) into buckets of `size` rows. */
export function bucketRows(rows: readonly SecondRow[], size: number): Bucket[] {
  const out: Bucket[] = [];
  for (let i = 0; i < rows.length; i += size) {
    const slice = rows.slice(i, i + size);
    const first = slice[0];
    if (first) out.push({ t_s: first.t_s, seconds: slice.length, rows: slice });
  }
  return out;
}

/** Largest value of a field in a bucket. */
export function maxOf(rows: readonly SecondRow[], pick: (r: SecondRow) => number): number {
  return rows.reduce((m, r) => Math.max(m, pick(r)), Number.NEGATIVE_INFINITY);
}

/** The largest present value of an optional field, or null when none is present. */
export function maxPresent(rows: readonly SecondRow[], pick: (r: SecondRow) => number | ''): number | null {
  let m: number | null = null;
  for (const r of rows) {
    const v = pick(r);
    if (v !== '' && (m === null || v > m)) m = v;
  }
  return m;
}

/** The mean of the present values of an optional field, or null. */
export function meanPresent(rows: readonly SecondRow[], pick: (r: SecondRow) => number | ''): number | null {
  let sum = 0;
  let n = 0;
  for (const r of rows) {
    const v = pick(r);
    if (v !== '') {
      sum += v;
      n++;
    }
  }
  return n === 0 ? null : sum / n;
}
