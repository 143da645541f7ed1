/**
 * A log-bucketed histogram for latency percentiles in bounded memory: values
 * up to 1 ms are kept in 0.01 ms buckets, larger ones in buckets 0.5 % wide,
 * so a percentile is within 0.5 % of the exact one whatever the run length.
 */

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

/** Counts of one page of whole microseconds in {@link MicrosecondHistogram}. */
const PAGE_BITS = 12;
const PAGE = 1 << PAGE_BITS;
/** Values from this many µs up (about 16.8 s) are counted in log buckets. */
const EXACT_LIMIT_US = PAGE * PAGE;

/**
 * A histogram exact to the microsecond, for values counted by the million (inter-token gaps):
 * every value is rounded to the µs (as every figure of a run's output is) and counted in a
 * page of 4,096 µs, allocated when first needed, so an add is an index and an increment, no
 * logarithm. Memory is 32 KiB per page in use (gaps of 5 to 100 ms use 24 pages, 768 KiB).
 * Values of about 16.8 s and more are counted in a {@link LatencyHistogram} (0.5 % buckets).
 * Percentiles are nearest-rank: the exact sample, to the µs, below 16.8 s.
 */
export class MicrosecondHistogram {
  /** Pages by index (µs >> PAGE_BITS); null until a value falls in one. */
  readonly #pages: (Float64Array | null)[] = Array.from({ length: PAGE }, () => null);
  readonly #over = new LatencyHistogram();
  count = 0;
  /** Sum and largest of the values, µs. */
  #sumUs = 0;
  #maxUs = 0;

  /** Adds a value in ms, rounded to the µs (negative values count as 0). */
  add(ms: number): void {
    this.addUs(Math.round(ms * 1000));
  }

  /** Adds a value in whole µs (negative values count as 0). */
  addUs(us: number): void {
    const v = us > 0 ? us : 0;
    if (v < EXACT_LIMIT_US) {
      const i = v >>> PAGE_BITS;
      const page = this.#pages[i] ?? this.#page(i);
      const j = v & (PAGE - 1);
      page[j] = (page[j] as number) + 1;
    } else {
      this.#over.add(v / 1000);
    }
    this.count++;
    this.#sumUs += v;
    if (v > this.#maxUs) this.#maxUs = v;
  }

  /** The largest value, ms. */
  get max(): number {
    return this.#maxUs / 1000;
  }

  #page(i: number): Float64Array {
    const page = new Float64Array(PAGE);
    this.#pages[i] = page;
    return page;
  }

  /** The q-quantile (0..1), ms: the nearest-rank value, to the µs; NaN when empty. */
  quantile(q: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < PAGE; i++) {
      const page = this.#pages[i];
      if (page === null || page === undefined) continue;
      for (let j = 0; j < PAGE; j++) {
        seen += page[j] as number;
        if (seen >= rank) return Math.min((i * PAGE + j) / 1000, this.max);
      }
    }
    return this.#over.atRank(rank - seen);
  }

  get mean(): number {
    return this.count === 0 ? Number.NaN : this.#sumUs / this.count / 1000;
  }
}

/** Rounds to 3 decimals (µs), for stable output. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
