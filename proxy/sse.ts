/**
 * What the relay watches in a response body without buffering it: the
 * first SSE `data:` field (the time-to-first-token mark), and the token
 * counts of the last `usage` object (kept from a small rolling tail).
 */

const DATA = 'data:';

/** Finds the first `data:` field of an event stream across chunk boundaries. */
export class FirstDataWatch {
  found = false;
  #atLineStart = true;
  /** Characters of `data:` matched so far at the current line start. */
  #matched = 0;

  /** Feeds a chunk; true when the first `data:` field completes inside it. */
  feed(chunk: Buffer): boolean {
    if (this.found) return false;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === 0x0a || c === 0x0d) {
        this.#atLineStart = true;
        this.#matched = 0;
        continue;
      }
      if (!this.#atLineStart) continue;
      if (c === DATA.charCodeAt(this.#matched)) {
        this.#matched++;
        if (this.#matched === DATA.length) {
          this.found = true;
          return true;
        }
      } else {
        this.#atLineStart = false;
        this.#matched = 0;
      }
    }
    return false;
  }
}

/** Bytes of the body kept to find the usage object at its end. */
export const USAGE_TAIL_BYTES = 4096;

/**
 * Keeps the last bytes of a body and reads `usage` token counts from them.
 * Chunks are kept by reference (no copy per chunk) until enough newer ones
 * cover USAGE_TAIL_BYTES; they are joined only when `usage()` is read.
 */
export class UsageTail {
  readonly #chunks: Buffer[] = [];
  /** Bytes in #chunks. */
  #bytes = 0;

  feed(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0]!.length >= USAGE_TAIL_BYTES)
      this.#bytes -= this.#chunks.shift()!.length;
  }

  /** The last prompt_tokens / completion_tokens seen, or nulls. */
  usage(): { prompt: number | null; output: number | null } {
    const c = this.#chunks;
    let all = c.length === 1 ? c[0]! : Buffer.concat(c);
    if (all.length > USAGE_TAIL_BYTES) all = all.subarray(all.length - USAGE_TAIL_BYTES);
    return {
      prompt: lastCount(all, '"prompt_tokens"', /"prompt_tokens"\s*:\s*(\d+)/g),
      output: lastCount(all, '"completion_tokens"', /"completion_tokens"\s*:\s*(\d+)/g),
    };
  }
}

/**
 * The number after the last `key: ` in `b` (searched in the bytes, no string
 * made); the regex over the latin1 text finds it when the last key is not
 * followed by one.
 */
function lastCount(b: Buffer, key: string, re: RegExp): number | null {
  const at = b.lastIndexOf(key, undefined, 'latin1');
  if (at < 0) return null;
  let i = at + key.length;
  while (isSpace(b[i])) i++;
  if (b[i] === 0x3a) {
    i++;
    while (isSpace(b[i])) i++;
    let n = 0;
    const from = i;
    while (i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39) n = n * 10 + (b[i++]! - 0x30);
    if (i > from) return n;
  }
  let v: number | null = null;
  for (const m of b.toString('latin1').matchAll(re)) v = Number(m[1]);
  return v;
}

/** The characters `\s` matches in ASCII JSON. */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0b || c === 0x0c;
}
