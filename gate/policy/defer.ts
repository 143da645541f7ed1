/**
 * Defer accounting: how many requests of each class wait in the (host's durable) defer store, and
 * a drain pace per class, a token bucket refilled at `drain_per_s` only while the system is healthy,
 * so deferred work comes back gradually instead of as a second spike. The store itself is the host's.
 */
import type { PolicyClass } from './compile.js';

export class DeferBook {
  readonly #classes: readonly PolicyClass[];
  readonly #backlog: number[];
  readonly #tokens: number[];
  readonly #last: number[];

  constructor(classes: readonly PolicyClass[], nowMs: number) {
    this.#classes = classes;
    this.#backlog = classes.map(() => 0);
    this.#tokens = classes.map(() => 0);
    this.#last = classes.map(() => nowMs);
  }

  backlog(i: number): number {
    return this.#backlog[i]!;
  }

  /** Whether class `i` may defer one more request. */
  hasRoom(i: number): boolean {
    const d = this.#classes[i]!.defer;
    return d !== undefined && this.#backlog[i]! < d.maxBacklog;
  }

  added(i: number): void {
    this.#backlog[i]!++;
  }

  /** Sets class `i`'s backlog (the store's pending count, after a reopen or a policy swap). */
  restore(i: number, count: number): void {
    this.#backlog[i] = Math.max(0, count);
  }

  /** A deferred request left the store (fed back, expired or cancelled). */
  removed(i: number): void {
    if (this.#backlog[i]! > 0) this.#backlog[i]!--;
  }

  /**
   * Whether one deferred request of class `i` may be fed back now; takes a drain token when so.
   * The bucket holds at most one second of drain, and does not fill while unhealthy.
   */
  mayDrain(i: number, now: number, healthy: boolean): boolean {
    const d = this.#classes[i]!.defer;
    if (d === undefined || this.#backlog[i]! === 0) return false;
    const dt = now - this.#last[i]!;
    this.#last[i] = now;
    if (healthy)
      this.#tokens[i] = Math.min(Math.max(1, d.drainPerS), this.#tokens[i]! + (dt * d.drainPerS) / 1000);
    if (!healthy || this.#tokens[i]! < 1) return false;
    this.#tokens[i]! -= 1;
    return true;
  }
}
