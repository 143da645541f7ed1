import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { Arc4Stream } from './arc4.js';

describe('Arc4Stream', () => {
  it('draws exactly the doubles of seedrandom keyed the same way', () => {
    for (const key of ['1/clients.prompt', '42/clients.arrival', '', 'a much longer key with unicode: ü ✓']) {
      const reference = seedrandom(key);
      const stream = new Arc4Stream(seedrandom(key, { state: true }).state());
      for (let k = 0; k < 100_000; k++) {
        const want = reference.double();
        const got = stream.double();
        if (!Object.is(got, want)) expect({ key, draw: k, got }).toEqual({ key, draw: k, got: want });
      }
    }
  });

  it('gives different streams for different keys', () => {
    const a = new Arc4Stream(seedrandom('1/a', { state: true }).state());
    const b = new Arc4Stream(seedrandom('1/b', { state: true }).state());
    const same = Array.from({ length: 100 }, () => a.double() === b.double()).filter(Boolean).length;
    expect(same).toBe(0);
  });
});
