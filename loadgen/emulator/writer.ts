/**
 * Writes one response's body, with the stall fault: after `stallAfterTokens` tokens, further
 * writes (and the end) are held for `stallMs` real ms, then flushed in order. The stall starts
 * at most once per response; 0 tokens means it starts before the first token.
 */
import type { ServerResponse } from 'node:http';

/** Stall settings of one response (from the faults when the request came in). */
export interface StallPlan {
  /** Real ms to hold writes; 0 = no stall. */
  readonly stallMs: number;
  /** Tokens written before the stall starts. */
  readonly afterTokens: number;
}

export class BodyWriter {
  readonly #res: ServerResponse;
  readonly #stall: StallPlan;
  #tokens = 0;
  /** Held writes while stalled; null when not stalled. `null` entries stand for the end. */
  #held: (string | null)[] | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stalled = false;

  constructor(res: ServerResponse, stall: StallPlan) {
    this.#res = res;
    this.#stall = stall;
    if (stall.stallMs > 0 && stall.afterTokens === 0) this.#startStall();
  }

  /** True once the stall has started (for stats and tests). */
  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * Writes the events of one token (may be empty for non-streaming responses) and counts it.
   * @param text the token's body text ('' to write nothing)
   */
  token(text: string): void {
    this.write(text);
    this.#tokens++;
    if (this.#stall.stallMs > 0 && !this.#stalled && this.#tokens >= this.#stall.afterTokens)
      this.#startStall();
  }

  /** Writes body text (held while stalled). */
  write(text: string): void {
    if (text === '') return;
    if (this.#held !== null) this.#held.push(text);
    else if (!this.#res.destroyed) this.#res.write(text);
  }

  /** Writes `text` and ends the response (both held while stalled). */
  end(text = ''): void {
    this.write(text);
    if (this.#held !== null) this.#held.push(null);
    else if (!this.#res.destroyed) this.#res.end();
  }

  /** Drops held writes and the stall timer (the client went away). */
  dispose(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#held = null;
  }

  #startStall(): void {
    this.#stalled = true;
    this.#held = [];
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const held = this.#held ?? [];
      this.#held = null;
      for (const h of held) {
        if (this.#res.destroyed) return;
        if (h === null) this.#res.end();
        else this.#res.write(h);
      }
    }, this.#stall.stallMs);
  }
}
