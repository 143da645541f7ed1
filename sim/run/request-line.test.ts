import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRowLine } from './request-line.js';

/** What the byte encoder writes for `v` alone on a line, as text; null when it refuses `v`. */
function encoded(v: number | string): string | null {
  const b = new Uint8Array(256);
  const end = encodeRowLine(b, 0, [v], b.length);
  return end < 0 ? null : Buffer.from(b.subarray(0, end)).toString('latin1');
}

describe('byte encoding of numbers and text (request-line.ts)', () => {
  it('prints numbers as String does across the fast paths and their edges', () => {
    const edges = [
      0,
      -0,
      1,
      9,
      10,
      99,
      100,
      999,
      1000,
      9999,
      10_000,
      99_999,
      100_000,
      999_999,
      1e6,
      9_999_999,
      1e7,
      99_999_999,
      1e8,
      999_999_999,
      1e9,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32,
      2 ** 31 / 1000,
      2147483.647,
      2147483.648,
      2147483.6475,
      0.001,
      0.01,
      0.1,
      0.5,
      0.009,
      0.09,
      0.099,
      0.909,
      1.1,
      1.01,
      1.001,
      1.011,
      1.101,
      1.11,
      12.5,
      208.694,
      506.32,
      3600000.5,
      3599999.999,
      1e12 - 0.001,
      1e12,
      1e15,
      1e21,
      0.1 + 0.2,
      1 / 3,
      2.5e-7,
      -1,
      -0.5,
      -(2 ** 31),
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ];
    for (const v of edges) expect(encoded(v)).toBe(`${String(v)}\n`);
    fc.assert(
      fc.property(fc.double(), (v) => encoded(v) === `${String(v)}\n`),
      { numRuns: 20_000 },
    );
    // The run's values: whole numbers and times rounded to the µs, small and large.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 53 }), fc.integer({ min: 0, max: 1e15 }), (i, k) => {
        const t = Math.round(k) / 1000;
        return encoded(i) === `${String(i)}\n` && encoded(t) === `${String(t)}\n`;
      }),
      { numRuns: 20_000 },
    );
  });

  it('writes text that needs no quoting as is and refuses the rest', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const plain = !/[",\r\n]/.test(s) && [...s].every((c) => c.charCodeAt(0) < 0x80);
        return encoded(s) === (plain ? `${s}\n` : null);
      }),
      { numRuns: 20_000 },
    );
    expect(encoded('10.0.0.1:8000')).toBe('10.0.0.1:8000\n');
    for (const s of ['a,b', 'a"b', 'a\nb', 'a\rb', 'é']) expect(encoded(s)).toBeNull();
  });
});
