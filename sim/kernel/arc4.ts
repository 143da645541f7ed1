/**
 * seedrandom's default generator (ARC4, `prng.double()`), continued from a keyed state: the
 * same numbers, drawn without allocating.
 *
 * seedrandom's `double()` builds each number from RC4 bytes in a chain of calls, and every
 * call that returns a 48-bit integer or a double boxes it on the heap: about 36 bytes of
 * garbage per draw, several draws per simulated request. Here the byte state is a
 * `Uint8Array` and a draw is one function, so nothing is boxed but the result. Keying stays
 * elsewhere: the simulator takes the state seedrandom keys (`rng.ts`), the load driver and k6
 * a port of seedrandom's key schedule (`seeded-streams.ts`, for k6, which cannot load
 * seedrandom). `arc4.test.ts` compares the draws with seedrandom's, draw by draw.
 */

/** An ARC4 state as seedrandom's `state()` gives it: the two indexes and the 256-byte permutation. */
export interface Arc4State {
  readonly i: number;
  readonly j: number;
  readonly S: ArrayLike<number>;
}

/** RC4 outputs per double before refilling (seedrandom's `chunks`). */
const CHUNKS = 6;

/** Uniform doubles in [0, 1) from an ARC4 state, as seedrandom draws them. */
export class Arc4Stream {
  readonly #s = new Uint8Array(256);
  #i: number;
  #j: number;

  /** @param state the keyed generator's state (copied) */
  constructor(state: Arc4State) {
    this.#s.set(state.S);
    this.#i = state.i;
    this.#j = state.j;
  }

  /** The next double in [0, 1), as seedrandom's `double()` would give it. */
  double(): number {
    // The powers of two are written here, not read from module constants: a bundle turns
    // those into mutable variables, and a loop variable that starts from one is kept boxed,
    // so every `d *= 256` allocated a heap number (about two per draw).
    let n = 0;
    for (let k = 0; k < CHUNKS; k++) n = n * 256 + this.#byte();
    // 256^6: the denominator of the first six bytes.
    let d = 2 ** 48;
    let x = 0;
    // A double has 52 significant bits; the numerator is topped up to at least 2^52.
    while (n < 2 ** 52) {
      n = (n + x) * 256;
      d *= 256;
      x = this.#byte();
    }
    while (n >= 2 ** 53) {
      n /= 2;
      d /= 2;
      x >>>= 1;
    }
    return (n + x) / d;
  }

  /** Discards the next `n` output bytes (seedrandom drops the first 256 after keying). */
  skip(n: number): void {
    for (let k = 0; k < n; k++) this.#byte();
  }

  /** The next RC4 output byte. */
  #byte(): number {
    const s = this.#s;
    const i = (this.#i + 1) & 255;
    const t = s[i] as number;
    const j = (this.#j + t) & 255;
    const u = s[j] as number;
    s[i] = u;
    s[j] = t;
    this.#i = i;
    this.#j = j;
    return s[(u + t) & 255] as number;
  }
}
