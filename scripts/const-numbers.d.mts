/** Types of const-numbers.mjs (a plain module, run by scripts/build.mjs before anything is built). */

/**
 * Declares `const` again each top-level `var NAME = <number literal>;` of a bundle that nothing in
 * it may assign.
 * @returns the rewritten text, and the names made `const`
 */
export function constNumbers(code: string): { code: string; names: string[] };
