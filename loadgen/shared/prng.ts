/**
 * Seeded random streams that run anywhere (Node, k6's JavaScript runtime, a browser): a port of
 * seedrandom 3.0.5's default ARC4 generator, giving the same doubles as `seedrandom(key).double()`
 * for the same string key. The simulator keys its streams `"<seed>/<name>"` (`sim/kernel/rng.ts`),
 * so {@link seededStreams} reproduces the simulator's draws without importing seedrandom, which a
 * k6 bundle could not resolve (it probes `require('crypto')`).
 */

/** A uniform random source on [0, 1). */
export type Uniform = () => number;

const WIDTH = 256;
const MASK = WIDTH - 1;
const CHUNKS = 6;
const START_DENOM = WIDTH ** CHUNKS;
const SIGNIFICANCE = 2 ** 52;
const OVERFLOW = SIGNIFICANCE * 2;

/** seedrandom's `mixkey`: folds a string into a key of at most 256 bytes. */
function mixKey(seed: string): number[] {
  const key: number[] = [];
  let smear = 0;
  for (let j = 0; j < seed.length; j++) {
    smear ^= (key[MASK & j] ?? 0) * 19;
    key[MASK & j] = MASK & (smear + seed.charCodeAt(j));
  }
  return key;
}

/** The ARC4 keystream, with the first 256 bytes discarded (as seedrandom does). */
class Arc4 {
  #i = 0;
  #j = 0;
  readonly #s: number[] = [];

  constructor(key: number[]) {
    const k = key.length === 0 ? [0] : key;
    const s = this.#s;
    for (let i = 0; i < WIDTH; i++) s[i] = i;
    let j = 0;
    for (let i = 0; i < WIDTH; i++) {
      const t = s[i] as number;
      j = MASK & (j + (k[i % k.length] as number) + t);
      s[i] = s[j] as number;
      s[j] = t;
    }
    this.g(WIDTH);
  }

  /** The next `count` bytes as one big-endian number. */
  g(count: number): number {
    const s = this.#s;
    let i = this.#i;
    let j = this.#j;
    let r = 0;
    for (let c = 0; c < count; c++) {
      i = MASK & (i + 1);
      const t = s[i] as number;
      j = MASK & (j + t);
      const sj = s[j] as number;
      s[i] = sj;
      s[j] = t;
      r = r * WIDTH + (s[MASK & (sj + t)] as number);
    }
    this.#i = i;
    this.#j = j;
    return r;
  }
}

/** A generator equal to `seedrandom(key).double`. */
export function arc4Uniform(key: string): Uniform {
  const arc4 = new Arc4(mixKey(key));
  return () => {
    let n = arc4.g(CHUNKS);
    let d = START_DENOM;
    let x = 0;
    while (n < SIGNIFICANCE) {
      n = (n + x) * WIDTH;
      d *= WIDTH;
      x = arc4.g(1);
    }
    while (n >= OVERFLOW) {
      n /= 2;
      d /= 2;
      x >>>= 1;
    }
    return (n + x) / d;
  };
}

/**
 * The simulator's named streams under run seed `seed`: stream `name` draws what
 * `rngStream(seed, name)` draws. Asking twice for a name gives two independent copies of that stream.
 */
export function seededStreams(seed: number | string): (name: string) => Uniform {
  return (name) => arc4Uniform(`${seed}/${name}`);
}
