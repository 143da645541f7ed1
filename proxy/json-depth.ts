/**
 * How deeply a JSON text nests, found by one scan of its brackets outside
 * strings, so that a body nested past a bound is refused before
 * `JSON.parse` builds it (and before anything that walks it recursively,
 * such as `JSON.stringify` in an error message, overflows the stack).
 */

/** True when `text` nests arrays/objects deeper than `max` levels. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
