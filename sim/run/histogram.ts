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
    const rank = Math.max(1, Math.ceil(q * this.count));
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

/** Rounds to 3 decimals (µs), for stable output. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
