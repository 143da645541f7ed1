/**
 * The SMG dialect's token bucket. Admission takes a token and a release puts
 * one back (never above capacity). With a refill rate, tokens also come back
 * over time, so in-flight may exceed the capacity by up to the rate per
 * second; refilled tokens go to the oldest waiter like returned ones.
 */
export class TokenBucket {
  /** Tokens available now (fractional while refilling). */
  tokens: number;
  #lastMs: number;

  /**
   * @param capacity tokens when full (`max_concurrent_requests`)
   * @param refillPerS tokens added per second (`rate_limit_tokens_per_second`; 0 = none)
   * @param nowMs creation time
   */
  constructor(
    readonly capacity: number,
    readonly refillPerS: number,
    nowMs: number,
  ) {
    this.tokens = capacity;
    this.#lastMs = nowMs;
  }

  /** Adds the tokens refilled since the last call. */
  refill(nowMs: number): void {
    if (this.refillPerS > 0 && nowMs > this.#lastMs) {
      this.tokens = Math.min(this.capacity, this.tokens + (this.refillPerS * (nowMs - this.#lastMs)) / 1000);
    }
    this.#lastMs = nowMs;
  }

  /** True when a token can be taken at `nowMs`. */
  available(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= 1;
  }

  take(): void {
    this.tokens -= 1;
  }

  giveBack(): void {
    this.tokens = Math.min(this.capacity, this.tokens + 1);
  }
}
