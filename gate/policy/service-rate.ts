/**
 * A class's recent service rate: seats released per millisecond over a sliding window (two
 * buckets, the older one weighted by how much of it is still inside the window). It is what the
 * queue's expected wait is computed from; with nothing released in the window it is unknown.
 */
export class ServiceRate {
  readonly #windowMs: number;
  #start: number;
  #prev = 0;
  #cur = 0;

  constructor(windowMs: number, nowMs: number) {
    this.#windowMs = windowMs;
    this.#start = nowMs;
  }

  #roll(now: number): void {
    const w = this.#windowMs;
    if (now - this.#start < w) return;
    if (now - this.#start >= 2 * w) {
      this.#prev = 0;
      this.#cur = 0;
      this.#start = now;
      return;
    }
    this.#prev = this.#cur;
    this.#cur = 0;
    this.#start += w;
  }

  /** Records `seats` released at `now`. */
  note(seats: number, now: number): void {
    this.#roll(now);
    this.#cur += seats;
  }

  /** Seats per millisecond, or undefined when nothing was released in the window. */
  perMs(now: number): number | undefined {
    this.#roll(now);
    const w = this.#windowMs;
    const seats = (this.#prev * (w - (now - this.#start))) / w + this.#cur;
    return seats > 0 ? seats / w : undefined;
  }

  /** Expected milliseconds until `seats` more are served, or undefined when the rate is unknown. */
  waitMs(seats: number, now: number): number | undefined {
    const r = this.perMs(now);
    return r === undefined ? undefined : seats / r;
  }
}
