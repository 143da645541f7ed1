/** The portable seeded streams draw what the simulator's seedrandom streams draw. */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { rngStream } from './rng.js';
import { arc4Uniform, seededStreams } from './seeded-streams.js';

describe('seeded streams', () => {
  it('draws what seedrandom draws', () => {
    for (const key of ['1/clients.arrival', '42/clients.tenant', '', 'ünï/çødé', 'x'.repeat(300)]) {
      const a = arc4Uniform(key);
      const b = seedrandom(key);
      for (let i = 0; i < 200; i++) expect(a()).toBe(b.double());
    }
  });

  it("draws for (seed, name) what the simulator's rngStream(seed, name) draws", () => {
    const mine = seededStreams(42)('clients.arrival');
    const theirs = rngStream(42, 'clients.arrival');
    for (let i = 0; i < 200; i++) expect(mine()).toBe(theirs.next());
  });
});
