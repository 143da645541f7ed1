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

/** Keeps the last bytes of a body and reads `usage` token counts from them. */
export class UsageTail {
  #tail: Buffer = Buffer.alloc(0);

  feed(chunk: Buffer): void {
    if (chunk.length >= USAGE_TAIL_BYTES)
      this.#tail = Buffer.from(chunk.subarray(chunk.length - USAGE_TAIL_BYTES));
    else {
      const keep = Math.max(0, USAGE_TAIL_BYTES - chunk.length);
      this.#tail = Buffer.concat([this.#tail.subarray(Math.max(0, this.#tail.length - keep)), chunk]);
    }
  }

  /** The last prompt_tokens / completion_tokens seen, or nulls. */
  usage(): { prompt: number | null; output: number | null } {
    const s = this.#tail.toString('latin1');
    return {
      prompt: last(s, /"prompt_tokens"\s*:\s*(\d+)/g),
      output: last(s, /"completion_tokens"\s*:\s*(\d+)/g),
    };
  }
}

function last(s: string, re: RegExp): number | null {
  let v: number | null = null;
  for (const m of s.matchAll(re)) v = Number(m[1]);
  return v;
}
