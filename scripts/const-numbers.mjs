/**
 * A pass over a bundle that scripts/build.mjs writes: declares again as `const` the top-level
 * numeric constants that esbuild declared as `var`.
 *
 * When it bundles, esbuild turns every top-level `const` of the sources into `var` (esbuild FAQ,
 * "Top-level var", https://esbuild.github.io/faq/#top-level-var; no option turns it off,
 * evanw/esbuild#623). In an ES module V8 keeps such a `var` as a mutable module variable: every
 * read in optimised code is a load from the module's context, and nothing folds it, so
 * `x / TWO_32` stays a division and `i & (CACHE - 1)` a subtraction at every call. A `const`
 * binding is immutable, and the optimising compiler uses its value as a constant (a loop of
 * such reads took 95 ms against 145 ms with `var`, node 20, BENCHMARKS.md). The sources
 * declared these names `const`, so this restores their own semantics, nothing more.
 *
 * Conservative: only a line `var NAME = <number literal>;` at the start of a line (esbuild writes
 * top-level statements unindented), and only when nothing else in the bundle could assign NAME
 * (an assignment or compound assignment, `++`/`--`, a `for (NAME of|in ...)`, or the name declared
 * a second time); anything that looks like one keeps the `var`, even a shadowing local's.
 *
 * Those patterns are text, and some writes are not text-shaped (a destructuring assignment
 * `[NAME] = xs`, `({ k: NAME } = o)`). So the rewritten bundle is then parsed by esbuild, whose
 * scope analysis warns at every assignment to a `const` binding ("This assignment will throw
 * because NAME is a constant"), destructuring and shadowing included; each name it warns about
 * gets its `var` back, and the text is parsed again until no such warning is left.
 */

import { transformSync } from 'esbuild';

const DECLARATION =
  /^var ([A-Za-z_$][\w$]*) = (-?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?));$/gm;

/** `name` as a regular expression source. */
function escaped(name) {
  return name.replace(/\$/g, '\\$');
}

/** How many places in `code` may assign (or declare) `name`. */
function writesOf(code, name) {
  const n = escaped(name);
  const id = `(?<![\\w$.])${n}(?![\\w$])`;
  const patterns = [
    // NAME = ..., NAME += ..., NAME >>>= ..., NAME ??= ... (not ==; `NAME => ...`, an arrow's
    // parameter, counts too, which only keeps a `var`).
    `${id}\\s*(?:[-+*/%&|^]|<<|>>>?|\\*\\*|\\?\\?|\\|\\||&&)?=(?!=)`,
    `(?:\\+\\+|--)\\s*${id}`,
    `${id}\\s*(?:\\+\\+|--)`,
    `\\bfor\\s*\\(\\s*${id}\\s+(?:of|in)\\b`,
    `\\b(?:var|let|const|function|class)\\s+${id}`,
  ];
  let count = 0;
  for (const p of patterns) count += (code.match(new RegExp(p, 'g')) ?? []).length;
  return count;
}

/**
 * @param {string} code a bundle's text
 * @returns {{ code: string, names: string[] }} the text with those declarations made `const`, and their names
 */
export function constNumbers(code) {
  const kept = new Set();
  for (;;) {
    const names = [];
    const out = code.replace(DECLARATION, (line, name, value) => {
      // The declaration itself matches twice (as `var NAME` and as `NAME = `); anything more keeps the var.
      if (kept.has(name) || writesOf(code, name) !== 2) return line;
      names.push(name);
      return `const ${name} = ${value};`;
    });
    const written = constantsAssigned(out).filter((n) => names.includes(n));
    if (written.length === 0) return { code: out, names };
    for (const n of written) kept.add(n);
  }
}

const CONSTANT_ASSIGNED = /^This assignment will throw because "([^"]+)" is a constant$/;

/** The names of `const` bindings that esbuild's parser finds assigned somewhere in `code`. */
function constantsAssigned(code) {
  const { warnings } = transformSync(code, { loader: 'js', format: 'esm', logLevel: 'silent' });
  const names = [];
  for (const w of warnings) {
    const m = CONSTANT_ASSIGNED.exec(w.text);
    if (m !== null) names.push(m[1]);
  }
  return names;
}
