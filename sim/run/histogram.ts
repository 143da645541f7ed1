/**
 * A log-bucketed histogram for latency percentiles in bounded memory: values
 * up to 1 ms are kept in 0.01 ms buckets, larger ones in buckets 0.5 % wide,
 * so a percentile is within 0.5 % of the exact one whatever the run length.
 */

import type { DeferredGaps } from '../engine/types.js';

const LINEAR_LIMIT_MS = 1;
const LINEAR_STEP_MS = 0.01;
const LINEAR_BUCKETS = Math.round(LINEAR_LIMIT_MS / LINEAR_STEP_MS);
const GROWTH = 1.005;
const LOG_GROWTH = Math.log(GROWTH);
/** Buckets counted in an array (see {@link LatencyHistogram}); the rest, in a map. */
const DENSE_BUCKETS = 8192;

export class LatencyHistogram {
  /**
   * Counts of buckets below {@link DENSE_BUCKETS} (every value up to about 10^17 ms), by
   * index: a run adds a value per request, and an array slot is cheaper than a map entry.
   */
  readonly #dense: number[] = [];
  /** Counts of any other bucket (a NaN value's included). */
  readonly #sparse = new Map<number, number>();
  count = 0;
  sum = 0;
  max = 0;

  /** Adds a value in ms (negative values count as 0). */
  add(ms: number): void {
    const v = Math.max(ms, 0);
    const b = bucketOf(v);
    const dense = this.#dense;
    if (b < DENSE_BUCKETS) {
      while (dense.length <= b) dense.push(0);
      dense[b] = (dense[b] as number) + 1;
    } else {
      this.#sparse.set(b, (this.#sparse.get(b) ?? 0) + 1);
    }
    this.count++;
    this.sum += v;
    this.max = Math.max(this.max, v);
  }

  /** The q-quantile (0..1), ms: the upper edge of its bucket, never above the maximum; NaN when empty. */
  quantile(q: number): number {
    if (this.count === 0) return Number.NaN;
    return this.atRank(Math.max(1, Math.ceil(q * this.count)));
  }

  /** The `rank`-th smallest value (1-based, at most `count`), ms, as {@link quantile} bounds it. */
  atRank(rank: number): number {
    let seen = 0;
    const dense = this.#dense;
    for (let k = 0; k < dense.length; k++) {
      seen += dense[k] as number;
      if (seen >= rank) return Math.min(upperEdge(k), this.max);
    }
    const keys = [...this.#sparse.keys()].sort((a, b) => a - b);
    for (const k of keys) {
      seen += this.#sparse.get(k)!;
      if (seen >= rank) return Math.min(upperEdge(k), this.max);
    }
    return this.max;
  }

  get mean(): number {
    return this.count === 0 ? Number.NaN : this.sum / this.count;
  }
}

function bucketOf(v: number): number {
  if (v < LINEAR_LIMIT_MS) return Math.floor(v / LINEAR_STEP_MS);
  return LINEAR_BUCKETS + Math.floor(Math.log(v / LINEAR_LIMIT_MS) / LOG_GROWTH);
}

function upperEdge(b: number): number {
  if (b < LINEAR_BUCKETS) return (b + 1) * LINEAR_STEP_MS;
  return LINEAR_LIMIT_MS * GROWTH ** (b - LINEAR_BUCKETS + 1);
}

/** Mantissa bits kept by {@link MicrosecondHistogram}: buckets 1/1024 of their value wide. */
const MANTISSA_BITS = 10;
const SUB = 1 << MANTISSA_BITS;
/** Values from 2^31 µs (about 36 min) up are counted in log buckets. */
const EXACT_LIMIT_US = 2 ** 31;
/** Buckets below {@link EXACT_LIMIT_US}: whole µs below 1,024, then 1,024 per octave. */
const US_BUCKETS = (31 - MANTISSA_BITS + 1) * SUB;

/**
 * A histogram of whole microseconds for values counted by the million (inter-token gaps), with
 * no logarithm per value: below 1,024 µs every µs is a bucket, above it each octave has 1,024
 * buckets (the value's top ten bits after the leading one), so a bucket is at most 1/1024
 * (≈ 0.1 %) of its values wide. The counts of the gaps a run sees (5 to 200 ms: eight
 * octaves, 64 KiB) stay in cache; a bucket per µs did not (a cache miss per value). Values of
 * 2^31 µs (≈ 36 min) and more go to a {@link LatencyHistogram}. A percentile is the upper edge
 * of the nearest-rank sample's bucket, capped at the maximum: never below the sample, at most
 * 0.1 % above it, and exact below 1.024 ms.
 */
export class MicrosecondHistogram {
  readonly #counts = new Float64Array(US_BUCKETS);
  readonly #over = new LatencyHistogram();
  #count = 0;
  /** Sum and largest of the values, µs. */
  #sumUs = 0;
  #maxUs = 0;
  /** Sources holding values for this histogram, settled before any read (see `GapSink.watch`). */
  readonly #deferred: DeferredGaps[] = [];

  /** Values counted (after settling the deferred ones). */
  get count(): number {
    this.#settle();
    return this.#count;
  }

  /** Counts the values of `source` before every read from now on. */
  watch(source: DeferredGaps): void {
    if (!this.#deferred.includes(source)) this.#deferred.push(source);
  }

  /** Adds a value in ms, rounded to the µs (negative values count as 0). */
  add(ms: number): void {
    this.addUs(Math.round(ms * 1000));
  }

  /** Adds a value in whole µs (negative values count as 0). */
  addUs(us: number): void {
    // biome-ignore lint/complexity/useMathMinMax: a NaN counts as 0 here, where Math.max would keep it
    const v = us > 0 ? us : 0;
    if (v < EXACT_LIMIT_US) {
      const b = bucketOfUs(v);
      this.#counts[b] = (this.#counts[b] as number) + 1;
    } else {
      this.#over.add(v / 1000);
    }
    this.#count++;
    this.#sumUs += v;
    if (v > this.#maxUs) this.#maxUs = v;
  }

  /** Adds `n` values of `us` whole µs (negative values count as 0; `n` a whole number, 0 adds none): O(1). */
  addManyUs(us: number, n: number): void {
    if (!(n > 0)) return;
    // biome-ignore lint/complexity/useMathMinMax: a NaN counts as 0 here, where Math.max would keep it
    const v = us > 0 ? us : 0;
    if (v < EXACT_LIMIT_US) {
      const b = bucketOfUs(v);
      this.#counts[b] = (this.#counts[b] as number) + n;
    } else {
      for (let i = 0; i < n; i++) this.#over.add(v / 1000);
    }
    this.#count += n;
    this.#sumUs += v * n;
    if (v > this.#maxUs) this.#maxUs = v;
  }

  /** The largest value, ms. */
  get max(): number {
    this.#settle();
    return this.#maxUs / 1000;
  }

  #settle(): void {
    const d = this.#deferred;
    for (let i = 0; i < d.length; i++) (d[i] as DeferredGaps).settleGaps();
  }

  /** The q-quantile (0..1), ms: the upper edge of the nearest-rank sample's bucket, capped at the maximum; NaN when empty. */
  quantile(q: number): number {
    const count = this.count;
    if (count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    const counts = this.#counts;
    for (let b = 0; b < US_BUCKETS; b++) {
      seen += counts[b] as number;
      if (seen >= rank) return Math.min(upperEdgeUs(b), this.#maxUs) / 1000;
    }
    return this.#over.atRank(rank - seen);
  }

  get mean(): number {
    const count = this.count;
    return count === 0 ? Number.NaN : this.#sumUs / count / 1000;
  }
}

/** The bucket of a whole number of µs below 2^31. */
function bucketOfUs(v: number): number {
  if (v < SUB) return v;
  const shift = 31 - Math.clz32(v) - MANTISSA_BITS;
  return (shift + 1) * SUB + ((v >>> shift) - SUB);
}

/** The largest whole µs in bucket `b`. */
function upperEdgeUs(b: number): number {
  if (b < SUB) return b;
  const shift = Math.floor(b / SUB) - 1;
  const mantissa = (b % SUB) + SUB;
  return (mantissa + 1) * 2 ** shift - 1;
}

/** Rounds to 3 decimals (µs), for stable output. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
