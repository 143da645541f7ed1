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
 *
 * Runs of gaps between consecutive completions, handed to a sink that can take them later (a
 * {@link GapSink} with `watch` and `addManyUs`, such as the run's ITL histogram), are not
 * handed over one by one: the log counts, per completion, how many such runs cross it (a
 * difference array beside the times, O(1) per run), and hands each completion's gap over once
 * with that count when no held request can add to it any more (when the ring makes room, or
 * when the sink settles). A run of 200 gaps thus costs two array updates instead of 200 sink
 * calls, and a step one `addManyUs` however many requests emitted at it.
 */

import type { GapSink } from './types.js';

const INITIAL_CAPACITY = 256;
const US_PER_MS = 1000;

export class StepLog {
  #us = new Float64Array(INITIAL_CAPACITY);
  /**
   * Differences of the deferred counts: the number of deferred runs that include the gap
   * ending at completion `k` is the sum of these over (`#settled`, `k`] (zero at and below).
   */
  #runs = new Float64Array(INITIAL_CAPACITY);
  #mask = INITIAL_CAPACITY - 1;
  /** The oldest ordinal kept. */
  #base = 1;
  /** The ordinal recorded next (the first completion is ordinal 1). */
  #next = 1;
  /** The gaps ending at completions up to this one have been handed over (ordinals ≥ `#base`). */
  #settled = 1;
  /** The sink deferred runs go to; null while none has been deferred. */
  #sink: GapSink | null = null;

  /**
   * @param oldestNeeded the oldest ordinal a held request may still read (its first token's),
   *   or Infinity when none: asked only when the ring is full
   */
  constructor(readonly oldestNeeded: () => number) {}

  /** Records the next completion, at `us` (whole µs). */
  record(us: number): void {
    // Room for this entry and the difference slot after it (a run ending here decrements it).
    if (this.#next - this.#base >= this.#mask) this.#makeRoom();
    this.#us[this.#next & this.#mask] = us;
    this.#next++;
  }

  /** When completion `ordinal` happened, ms. */
  atMs(ordinal: number): number {
    return (this.#us[ordinal & this.#mask] as number) / US_PER_MS;
  }

  /**
   * Hands `sink` the gaps (µs) between consecutive completions `from` → `from + 1` → … → `to`
   * (`from` not older than the oldest first token of a held request). With a sink that has
   * `watch` and `addManyUs`, those not yet settled are handed over later, counted with the
   * other requests' (see the module note); the others at once, one by one.
   */
  gaps(from: number, to: number, sink: GapSink): void {
    if (to <= from) return;
    let eagerTo = to;
    if (sink.watch !== undefined && sink.addManyUs !== undefined) {
      if (this.#sink !== sink) this.#adopt(sink);
      const start = Math.max(from + 1, this.#settled + 1);
      if (start <= to) {
        const runs = this.#runs;
        const mask = this.#mask;
        runs[start & mask] = (runs[start & mask] as number) + 1;
        runs[(to + 1) & mask] = (runs[(to + 1) & mask] as number) - 1;
        eagerTo = start - 1;
      }
    }
    const us = this.#us;
    const mask = this.#mask;
    let prev = us[from & mask] as number;
    for (let k = from + 1; k <= eagerTo; k++) {
      const t = us[k & mask] as number;
      sink.addUs(t - prev);
      prev = t;
    }
  }

  /** The gap (µs) from completion `from` to completion `to`. */
  gapUs(from: number, to: number): number {
    return (this.#us[to & this.#mask] as number) - (this.#us[from & this.#mask] as number);
  }

  /** Hands the sink every deferred gap recorded so far (see {@link GapSink.watch}). */
  settleGaps(): void {
    this.#settleTo(this.#next - 1);
  }

  /** Entries kept (for tests and the memory bench). */
  get size(): number {
    return this.#next - this.#base;
  }

  /** Deferred runs go to `sink` from now on: what was deferred for the previous one goes to it first. */
  #adopt(sink: GapSink): void {
    if (this.#sink !== null) this.settleGaps();
    this.#sink = sink;
    sink.watch?.(this);
  }

  /** Hands over the counted gaps ending at completions (`#settled`, `upTo`]. */
  #settleTo(upTo: number): void {
    const sink = this.#sink;
    if (upTo <= this.#settled) return;
    if (sink === null || sink.addManyUs === undefined) {
      this.#settled = upTo;
      return;
    }
    const us = this.#us;
    const runs = this.#runs;
    const mask = this.#mask;
    let n = 0;
    let prev = us[this.#settled & mask] as number;
    for (let k = this.#settled + 1; k <= upTo; k++) {
      const slot = k & mask;
      n += runs[slot] as number;
      runs[slot] = 0;
      const t = us[slot] as number;
      if (n > 0) sink.addManyUs(t - prev, n);
      prev = t;
    }
    // What runs past `upTo` still needs of the counts ending here (runs that began at or below it).
    const after = (upTo + 1) & mask;
    runs[after] = (runs[after] as number) + n;
    this.#settled = upTo;
  }

  #makeRoom(): void {
    const oldest = this.oldestNeeded();
    // No held request can add to the gaps ending at or below its first token: settle them.
    const keepFrom = Math.max(this.#base, Math.min(oldest, this.#next - 1));
    this.#settleTo(keepFrom);
    this.#base = keepFrom;
    if (this.#next - this.#base < (this.#mask + 1) / 2) return;
    const oldUs = this.#us;
    const oldRuns = this.#runs;
    const oldMask = this.#mask;
    const grownUs = new Float64Array(oldUs.length * 2);
    const grownRuns = new Float64Array(oldUs.length * 2);
    const mask = grownUs.length - 1;
    for (let k = this.#base; k <= this.#next; k++) {
      grownUs[k & mask] = oldUs[k & oldMask] as number;
      grownRuns[k & mask] = oldRuns[k & oldMask] as number;
    }
    this.#us = grownUs;
    this.#runs = grownRuns;
    this.#mask = mask;
  }
}
