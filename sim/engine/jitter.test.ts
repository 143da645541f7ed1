import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { lognormalStepJitter } from './jitter.js';

/** A fresh jitter of the same key for every call: its factor never comes from the cache. */
const uncached = (sigma: number, ordinal: number): number =>
  lognormalStepJitter(sigma, rngStream(7, 'jitter.test')).factor(ordinal);

describe('lognormalStepJitter', () => {
  it('gives the same factor for an ordinal whether cached, evicted or fresh', () => {
    const j = lognormalStepJitter(0.03, rngStream(7, 'jitter.test'));
    // Out of order, with ordinals 32 apart sharing a cache slot, repeats, and one past 2^32.
    const ordinals = [0, 1, 2, 33, 1, 65, 33, 2, 0, 31, 63, 95, 31, 2 ** 32 + 5, 5, 2 ** 32 + 5, 64, 0];
    for (const k of ordinals) expect(j.factor(k)).toBe(uncached(0.03, k));
  });

  it('gives the factors of the uint32 formula it documents (a counter hash into Box–Muller)', () => {
    // The reference: MurmurHash3's finaliser on uint32 words, written plainly.
    const mix = (h: number): number => {
      let x = h >>> 0;
      x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
      return (x ^ (x >>> 16)) >>> 0;
    };
    const rng = rngStream(7, 'jitter.test');
    const k0 = Math.floor(rng.next() * 2 ** 32) >>> 0;
    const k1 = Math.floor(rng.next() * 2 ** 32) >>> 0;
    const reference = (sigma: number, ordinal: number): number => {
      const hi = Math.floor(ordinal / 2 ** 32) >>> 0;
      const a = mix(mix((ordinal >>> 0) ^ k0) ^ Math.imul(hi + 1, 0x9e3779b9));
      const b = mix(mix(a ^ k1) + 0x6a09e667);
      const z = Math.sqrt(-2 * Math.log((a + 0.5) / 2 ** 32)) * Math.cos(2 * Math.PI * ((b + 0.5) / 2 ** 32));
      return Math.exp(sigma * z);
    };
    const ordinals = [0, 1, 2, 3, 1000, 65535, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 17];
    for (let k = 0; k < 5000; k++) ordinals.push(k * 7919);
    for (const k of ordinals) expect(uncached(0.03, k), `ordinal ${k}`).toBe(reference(0.03, k));
  });

  it('keys engines apart and keeps sigma 0 at exactly 1', () => {
    const a = lognormalStepJitter(0.03, rngStream(7, 'a'));
    const b = lognormalStepJitter(0.03, rngStream(7, 'b'));
    expect(a.factor(3)).not.toBe(b.factor(3));
    expect(lognormalStepJitter(0, rngStream(7, 'a')).factor(3)).toBe(1);
  });

  it('has the lognormal spread of its sigma', () => {
    const j = lognormalStepJitter(0.03, rngStream(7, 'spread'));
    const logs = Array.from({ length: 20000 }, (_, k) => Math.log(j.factor(k)));
    const mean = logs.reduce((s, x) => s + x, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((s, x) => s + (x - mean) ** 2, 0) / (logs.length - 1));
    expect(Math.abs(mean)).toBeLessThan(0.001);
    expect(sd).toBeGreaterThan(0.029);
    expect(sd).toBeLessThan(0.031);
    // The tails of a normal ln(factor): 5 % below -1.645σ, 5 % above +1.645σ.
    const below = logs.filter((x) => x < -1.6449 * 0.03).length / logs.length;
    const above = logs.filter((x) => x > 1.6449 * 0.03).length / logs.length;
    expect(below).toBeGreaterThan(0.045);
    expect(below).toBeLessThan(0.055);
    expect(above).toBeGreaterThan(0.045);
    expect(above).toBeLessThan(0.055);
  });

  it('refuses a negative or infinite sigma, naming the value', () => {
    expect(() => lognormalStepJitter(-1, rngStream(7, 'x'))).toThrow(/sigma >= 0, got -1/);
    expect(() => lognormalStepJitter(Number.POSITIVE_INFINITY, rngStream(7, 'x'))).toThrow(/Infinity/);
  });
});
