/** The bundle pass that declares esbuild's top-level numeric `var`s `const` again (scripts/const-numbers.mjs). */
import { describe, expect, it } from 'vitest';
import { constNumbers } from '../scripts/const-numbers.mjs';

describe('constNumbers', () => {
  it('makes const a top-level number the bundle only reads', () => {
    const code = [
      'var US_PER_MS = 1e3;',
      'var TWO_32 = 4294967296;',
      'var MASK = 0xff;',
      'var NEG = -1.5;',
      'function f(x) { return x / US_PER_MS + TWO_32 * (MASK & NEG) + o.US_PER_MS; }',
      'o.TWO_32 = 1;',
      'const g = { MASK: 2 };',
      'if (US_PER_MS == 1000 && MASK >= 1 && NEG <= 0) f(1);',
    ].join('\n');
    const { code: out, names } = constNumbers(code);
    expect(names).toEqual(['US_PER_MS', 'TWO_32', 'MASK', 'NEG']);
    expect(out.split('\n').slice(0, 4)).toEqual([
      'const US_PER_MS = 1e3;',
      'const TWO_32 = 4294967296;',
      'const MASK = 0xff;',
      'const NEG = -1.5;',
    ]);
    expect(out.split('\n').slice(4)).toEqual(code.split('\n').slice(4));
  });

  it('keeps var for a name anything may assign or declare again', () => {
    const writes = [
      'A = 2;',
      'A += 2;',
      'A >>>= 1;',
      'A ??= 1;',
      'A++;',
      '--A;',
      'for (A of xs) ;',
      'for (A in o) ;',
      'function h() { let A = 3; return A; }',
      'var A = 2;',
      'const k = A => A;',
    ];
    for (const w of writes) {
      const code = `var A = 1;\n${w}\nvar B = 5;\nuse(A, B);`;
      const { code: out, names } = constNumbers(code);
      expect(names, w).toEqual(['B']);
      expect(out.startsWith('var A = 1;\n'), w).toBe(true);
    }
  });

  it('keeps var for a name a destructuring assignment writes, which only the parser sees', () => {
    const writes = [
      'function h(xs) { [A] = xs; }',
      'function h(o) { ({ k: A } = o); }',
      'function h(o) { [{ k: [A] }] = o; }',
      'function h(o) { ({ ...A } = o); }',
    ];
    for (const w of writes) {
      const code = `var A = 1;\n${w}\nvar B = 5;\nuse(A, B, h);`;
      const { code: out, names } = constNumbers(code);
      expect(names, w).toEqual(['B']);
      expect(out.startsWith('var A = 1;\n'), w).toBe(true);
      expect(out).toContain('const B = 5;');
    }
  });

  it('makes const a name only a shadowing local destructures', () => {
    const code = 'var A = 1;\nfunction h(xs, A) { [A] = xs; return A; }\nuse(A, h);';
    expect(constNumbers(code).names).toEqual(['A']);
  });

  it('leaves indented declarations, other values and the rest of the text alone', () => {
    const code = [
      'var init = __esm(() => {',
      '  var INNER = 3;',
      '});',
      'var S = "x";',
      'var E = f();',
      'var L;',
      'var X = 1, Y = 2;',
    ].join('\n');
    expect(constNumbers(code)).toEqual({ code, names: [] });
  });

  it('gives code that computes the same', () => {
    const code =
      'var K = 1000;\nvar N = 32;\nfunction f(i) { return (i & (N - 1)) / K; }\nout.push(f(12345), f(-7));';
    const run = (src: string): number[] => {
      const out: number[] = [];
      new Function('out', src)(out);
      return out;
    };
    expect(run(constNumbers(code).code)).toEqual(run(code));
  });
});
