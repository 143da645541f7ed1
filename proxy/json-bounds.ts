/**
 * A bound on the nesting of JSON the proxy parses. `JSON.parse` copes with
 * deep input, but `JSON.stringify` and any recursive walk of the result
 * overflow the stack (a 10 KB body of nested arrays is enough), so a body
 * is scanned for its depth, in one pass over its bytes, before it is parsed.
 */

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Default deepest nesting of arrays and objects in a JSON body the proxy parses. */
export const DEFAULT_MAX_JSON_DEPTH = 128;

/**
 * Whether `text` nests arrays and objects deeper than `max` levels (brackets
 * inside strings do not count). Malformed JSON is not judged here: the parse
 * that follows refuses it.
 */
export function jsonDepthExceeds(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}
