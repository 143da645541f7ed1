/**
 * Seeded per-step jitter of an engine's step time: step `k` of an engine takes
 * `exp(σ·Z_k)` times its modelled duration, `Z_k` a standard normal.
 *
 * `Z_k` is a pure function of the engine's key and the step's ordinal `k` (a counter hash
 * fed to Box–Muller), not the next draw of a stream. So a step's factor is the same whether
 * the engine plans it ahead (run-ahead, `run-ahead.ts`) and later drops the plan or steps one
 * event at a time: the two modes still give byte-identical outputs. The key is drawn once from
 * the run's seeded stream of the engine (`sim/kernel/rng.ts`), so the same seed gives the
 * same factors and different engines get independent ones.
 *
 * σ = 0.03 by default (profiles.ts): InferenceBench's concurrency-1 sweep point (one request
 * at a time, so one prefill step per TTFT) has TTFT p99/p50 = 14.95/13.98 = 1.069 =
 * exp(2.326·σ), σ ≈ 0.029 (yobitelcomm.github.io/bench/recipes/concurrency-sweep/).
 */
import type { Rng } from '../kernel/rng.js';

/** Multiplies step k's duration by a seeded lognormal factor. */
export interface StepJitter {
  /** σ of ln(factor); 0 = no jitter. */
  readonly sigma: number;
  /** The factor of step `ordinal` (an integer ≥ 0). */
  factor(ordinal: number): number;
}

const TWO_32 = 4294967296;
/** Factors kept per engine (a power of two above the run-ahead's 16 planned steps). */
const CACHE = 32;

/**
 * A 32-bit avalanche mix (the finaliser of MurmurHash3), as int32: the same bits as the uint32
 * word. An int32 is a small integer to V8, a uint32 above 2^31 a heap number: returned from a
 * call that was not inlined it was an allocation, about 5 % of bench:sim's bytes allocated.
 */
function mix32(h: number): number {
  let x = h | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/**
 * The factors of one engine: its key, and the last {@link CACHE} factors by ordinal, as
 * (ordinal, factor) pairs side by side in one array, so a lookup touches one cache line.
 */
class LognormalJitter implements StepJitter {
  /** The key, as int32 (XOR reads only the bits: the same hashes as the uint32 words). */
  readonly #k0: number;
  readonly #k1: number;
  /** `[2·slot]`: the ordinal cached in the slot (-1: none); `[2·slot + 1]`: its factor. */
  readonly #cache = new Float64Array(2 * CACHE).fill(-1);

  constructor(
    readonly sigma: number,
    k0: number,
    k1: number,
  ) {
    this.#k0 = k0 | 0;
    this.#k1 = k1 | 0;
  }

  factor(ordinal: number): number {
    const sigma = this.sigma;
    if (sigma === 0) return 1;
    // The last CACHE factors by ordinal: a run-ahead plan that an arrival cuts short is planned
    // again from the same ordinals (about a third of all factors in bench:sim), and the four
    // transcendental calls below were a tenth of its time. A factor is a pure function of the
    // ordinal, so a cached one is the same double.
    const cache = this.#cache;
    const at = 2 * (ordinal & (CACHE - 1));
    if (cache[at] === ordinal) return cache[at + 1] as number;
    // Two uniforms in (0, 1) from (key, ordinal); ordinals beyond 2^32 wrap (~50 days of 1 ms steps).
    const lo = ordinal >>> 0;
    const hi = Math.floor(ordinal / TWO_32) >>> 0;
    const a = mix32(mix32(lo ^ this.#k0) ^ Math.imul(hi + 1, 0x9e3779b9));
    const b = mix32(mix32(a ^ this.#k1) + 0x6a09e667);
    // The words as uint32 (mix32 gives int32; `+` above is taken mod 2^32 by the next mix).
    const u1 = ((a >>> 0) + 0.5) / TWO_32;
    const u2 = ((b >>> 0) + 0.5) / TWO_32;
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    const f = Math.exp(sigma * z);
    cache[at] = ordinal;
    cache[at + 1] = f;
    return f;
  }
}

/** Lognormal step jitter keyed by two 32-bit words drawn from `rng`. */
export function lognormalStepJitter(sigma: number, rng: Rng): StepJitter {
  if (!(sigma >= 0) || !Number.isFinite(sigma)) throw new RangeError(`Expected sigma >= 0, got ${sigma}`);
  const k0 = Math.floor(rng.next() * TWO_32) >>> 0;
  const k1 = Math.floor(rng.next() * TWO_32) >>> 0;
  return new LognormalJitter(sigma, k0, k1);
}
