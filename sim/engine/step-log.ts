/**
 * The completion times of an engine's steps, by ordinal (the engine's count of completed
 * batches), kept for as long as a request the engine holds may need them: a request's token
 * times are the completions at which it emitted, so its inter-token gaps are read from here when
 * it finishes (`Seq.tokenGaps`), with no work per token while it runs.
 *
 * A ring of whole microseconds (the host clock's grid, so a gap is an exact difference). When it
 * is full, the entries older than the oldest first token of a held request are dropped; if
 * that frees less than half of it, it doubles (so the held requests are looked over at most
 * once per half a ring of steps). Its size is thus bounded by the steps of the longest-held
 * request, not by the run's length.
 */

import type { GapSink } from './types.js';

const INITIAL_CAPACITY = 256;
const US_PER_MS = 1000;

export class StepLog {
  #us = new Float64Array(INITIAL_CAPACITY);
  #mask = INITIAL_CAPACITY - 1;
  /** The oldest ordinal kept. */
  #base = 1;
  /** The ordinal recorded next (the first completion is ordinal 1). */
  #next = 1;

  /**
   * @param oldestNeeded the oldest ordinal a held request may still read (its first token's),
   *   or Infinity when none: asked only when the ring is full
   */
  constructor(readonly oldestNeeded: () => number) {}

  /** Records the next completion, at `us` (whole µs). */
  record(us: number): void {
    if (this.#next - this.#base > this.#mask) this.#makeRoom();
    this.#us[this.#next & this.#mask] = us;
    this.#next++;
  }

  /** When completion `ordinal` happened, ms. */
  atMs(ordinal: number): number {
    return (this.#us[ordinal & this.#mask] as number) / US_PER_MS;
  }

  /** Hands `sink` the gaps (µs) between consecutive completions `from` → `from + 1` → … → `to`. */
  gaps(from: number, to: number, sink: GapSink): void {
    const us = this.#us;
    const mask = this.#mask;
    let prev = us[from & mask] as number;
    for (let k = from + 1; k <= to; k++) {
      const t = us[k & mask] as number;
      sink.addUs(t - prev);
      prev = t;
    }
  }

  /** The gap (µs) from completion `from` to completion `to`. */
  gapUs(from: number, to: number): number {
    return (this.#us[to & this.#mask] as number) - (this.#us[from & this.#mask] as number);
  }

  /** Entries kept (for tests and the memory bench). */
  get size(): number {
    return this.#next - this.#base;
  }

  #makeRoom(): void {
    const oldest = this.oldestNeeded();
    this.#base = Math.max(this.#base, Math.min(oldest, this.#next));
    if (this.#next - this.#base <= (this.#mask + 1) / 2) return;
    const old = this.#us;
    const oldMask = this.#mask;
    const grown = new Float64Array(old.length * 2);
    const mask = grown.length - 1;
    for (let k = this.#base; k < this.#next; k++) grown[k & mask] = old[k & oldMask] as number;
    this.#us = grown;
    this.#mask = mask;
  }
}
