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

/** Rings given back by finished tails, reused by new ones (at most FREE_RINGS_MAX). */
const freeRings: Buffer[] = [];
/** Largest number of idle rings kept (x USAGE_TAIL_BYTES of memory). */
export const FREE_RINGS_MAX = 512;

/**
 * Keeps the last bytes of a body and reads `usage` token counts from them.
 * The bytes are copied into one ring of USAGE_TAIL_BYTES, taken at the
 * first chunk from the rings that finished tails gave back (`release`):
 * the relayed chunks themselves are not kept, so they die young instead of
 * surviving the stream (and being promoted by the GC), and no buffer is
 * allocated per stream.
 */
export class UsageTail {
  #ring: Buffer | null = null;
  /** Next write offset in #ring. */
  #at = 0;
  /** The ring has been filled once (its oldest byte is at #at). */
  #wrapped = false;

  feed(chunk: Buffer): void {
    const n = chunk.length;
    if (n === 0) return;
    if (this.#ring === null) this.#ring = freeRings.pop() ?? Buffer.allocUnsafeSlow(USAGE_TAIL_BYTES);
    const r = this.#ring;
    // Byte by byte: no view objects per chunk (SSE chunks are a few hundred bytes).
    let at = this.#at;
    for (let i = n > USAGE_TAIL_BYTES ? n - USAGE_TAIL_BYTES : 0; i < n; i++) {
      r[at] = chunk[i]!;
      if (++at === USAGE_TAIL_BYTES) {
        at = 0;
        this.#wrapped = true;
      }
    }
    this.#at = at;
  }

  /** The last prompt_tokens / completion_tokens seen, or nulls. */
  usage(): { prompt: number | null; output: number | null } {
    const r = this.#ring;
    if (r === null) return { prompt: null, output: null };
    const all = !this.#wrapped
      ? r.subarray(0, this.#at)
      : this.#at === 0
        ? r
        : Buffer.concat([r.subarray(this.#at), r.subarray(0, this.#at)]);
    return {
      prompt: lastCount(all, '"prompt_tokens"', /"prompt_tokens"\s*:\s*(\d+)/g),
      output: lastCount(all, '"completion_tokens"', /"completion_tokens"\s*:\s*(\d+)/g),
    };
  }

  /** Gives the ring back for reuse and empties the tail (it may be fed again). */
  release(): void {
    const r = this.#ring;
    if (r === null) return;
    this.#ring = null;
    this.#at = 0;
    this.#wrapped = false;
    if (freeRings.length < FREE_RINGS_MAX) freeRings.push(r);
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
