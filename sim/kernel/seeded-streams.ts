/**
 * Seeded random streams that run anywhere (Node, k6's JavaScript runtime, a browser): a port of
 * seedrandom 3.0.5's default ARC4 generator, giving the same doubles as `seedrandom(key).double()`
 * for the same string key. The simulator keys its streams `"<seed>/<name>"` (`sim/kernel/rng.ts`),
 * so {@link seededStreams} reproduces the simulator's draws without importing seedrandom, which a
 * k6 bundle could not resolve (it probes `require('crypto')`).
 */

import { type Arc4State, Arc4Stream } from './arc4.js';

/** A uniform random source on [0, 1). */
export type Uniform = () => number;

const WIDTH = 256;
const MASK = WIDTH - 1;

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

/** seedrandom's RC4 key schedule over `key` (before the keystream's first 256 bytes are dropped). */
function scheduledState(key: string): Arc4State {
  const k = mixKey(key);
  if (k.length === 0) k.push(0);
  const s: number[] = [];
  for (let i = 0; i < WIDTH; i++) s[i] = i;
  let j = 0;
  for (let i = 0; i < WIDTH; i++) {
    const t = s[i] as number;
    j = MASK & (j + (k[i % k.length] as number) + t);
    s[i] = s[j] as number;
    s[j] = t;
  }
  return { i: 0, j: 0, S: s };
}

/** A generator equal to `seedrandom(key).double`. */
export function arc4Uniform(key: string): Uniform {
  const stream = new Arc4Stream(scheduledState(key));
  stream.skip(WIDTH);
  return () => stream.double();
}

/**
 * The simulator's named streams under run seed `seed`: stream `name` draws what
 * `rngStream(seed, name)` draws. Asking twice for a name gives two independent copies of that stream.
 */
export function seededStreams(seed: number | string): (name: string) => Uniform {
  return (name) => arc4Uniform(`${seed}/${name}`);
}
