/**
 * The process-wide budget of request-body bytes being read before the
 * gate's decision. A body declared within `--buffer-body-bytes` is read
 * whole before the request is gated, so until it is complete the gate does
 * not count it: without a bound, many slow bodies would cost memory without
 * limit. Each body reserves its declared length before its first byte is
 * read and gives it back when it is complete or the exchange ends.
 */
export class BodyBudget {
  readonly #held = new Map<object, number>();
  #used = 0;

  /** @param bound most bytes reserved at once (0: no bound) */
  constructor(readonly bound: number) {}

  /** Bytes reserved now. */
  get used(): number {
    return this.#used;
  }

  /** Reserves `bytes` for `owner`; false (nothing reserved) when that would pass the bound. */
  take(owner: object, bytes: number): boolean {
    if (this.bound > 0 && this.#used + bytes > this.bound) return false;
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + bytes);
    this.#used += bytes;
    return true;
  }

  /** Gives back what `owner` holds (nothing when it holds nothing). */
  give(owner: object): void {
    const n = this.#held.get(owner);
    if (n === undefined) return;
    this.#held.delete(owner);
    this.#used -= n;
  }
}
