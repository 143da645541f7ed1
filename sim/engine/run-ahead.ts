/**
 * Runs of uneventful engine steps, planned ahead so that a host need not dispatch each one.
 *
 * Near capacity most engine steps are decodes in which nothing a host sees happens: every
 * running sequence gains one token, none emits its first or last one, nothing is admitted or
 * preempted. Such a step still costs an event (a timer firing, a completion pass and a
 * scheduling pass over the batch). After a pass that formed a batch of decodes only, with no
 * admission and no preemption, the steps that follow are known in advance until the first
 * one in which a sequence finishes (or emits its first token), the KV pool would run short,
 * or {@link RUN_AHEAD_MAX} is reached: the batch stays the same sequences, its context grows
 * by one token per sequence per step, and any waiting request that could not be admitted
 * still cannot (free blocks only shrink). The engine plans their end times with the same
 * step-time model on the host clock's grid of whole microseconds, and applies them in one
 * O(batch) update when anything reads or changes the engine ({@link VllmEngine.catchUp}). A
 * submit, an abort, a restart or a change of the step-time inputs drops what is planned past
 * the batch in flight, which then ends exactly as it would have.
 *
 * The outputs are those of stepping one event at a time; `run-ahead.test.ts` checks this
 * against the same engine with run-ahead off. Ends are planned in integer microseconds: a
 * step's duration is a whole number of µs, and the host's clock rounds a time to the µs, so
 * a planned end is its start plus its duration exactly, with no rounding to repeat. (Stepped
 * one at a time, the end `startMs + durationMs` rounds to the same µs: for times below 2^40
 * µs, the sum's error is far under half a µs.)
 */
import type { RunningBatch } from './running-batch.js';
import type { BatchShape } from './step-time.js';
import type { EngineRequest } from './types.js';

/** Most steps in one planned run (a planned pass then needs at most one new KV block per sequence). */
export const RUN_AHEAD_MAX = 16;

const US_PER_MS = 1000;

type MutableBatchShape = { -readonly [K in keyof BatchShape]: BatchShape[K] };

export class RunAhead {
  /** End (µs, an integer) of each planned batch; batch 0 is the one formed at planning. */
  readonly #ends = new Float64Array(RUN_AHEAD_MAX);
  /** Batches planned; 0 when nothing is. */
  #count = 0;
  /** The planned batch in flight. */
  #done = 0;
  /** `#firstNeed[p]`: sequences whose next KV block is needed at pass p (1..RUN_AHEAD_MAX). */
  readonly #firstNeed = new Int32Array(RUN_AHEAD_MAX + 1);
  readonly #shape: MutableBatchShape = {
    numSeqs: 0,
    numTokens: 0,
    numPrefillTokens: 0,
    numDecodeSeqs: 0,
    contextTokens: 0,
    prefillAttentionTokens2: 0,
  };

  /**
   * Plans the run that starts with the batch just formed: all of `batch` decoding, ending at
   * `firstEndUs`.
   * @param firstAt `generated` at which a sequence emits its first token
   * @param freeBlocks KV blocks free after the pass
   * @param contextTokens the batch's context tokens (its shape's `contextTokens`)
   * @param firstEndUs when the batch just formed ends, µs (an integer)
   * @param durationUs the engine's step duration (whole µs) for a shape starting at a time (µs),
   *   the planned batch's offset from the one just formed (1, 2, ...) last
   */
  plan<R extends EngineRequest>(
    batch: RunningBatch<R>,
    firstAt: number,
    blockSize: number,
    freeBlocks: number,
    contextTokens: number,
    firstEndUs: number,
    durationUs: (shape: BatchShape, startUs: number, offset: number) => number,
  ): void {
    this.#count = 0;
    this.#done = 0;
    const n = batch.length;
    const { generated, finishAt } = batch;
    let minRemaining = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const g = generated[i] as number;
      if (g < firstAt) return;
      const remaining = (finishAt[i] as number) - g;
      if (remaining < minRemaining) minRemaining = remaining;
    }
    // Batch j's completion finishes a sequence when j + 1 >= its remaining tokens: the last
    // planned batch may be that one (the host is then woken for it), no earlier one.
    let count = Math.min(RUN_AHEAD_MAX, minRemaining, blockSize + 1);
    if (count < 2) return;
    // A planned pass needs a new block for a sequence whose held blocks its tokens outgrow, and
    // no run is longer than a block plus one pass: each sequence needs at most one block over
    // the whole run. With a free block per sequence the pool cannot run short, and the passes
    // at which the blocks are needed do not matter.
    const need = this.#firstNeed;
    const short = freeBlocks < n;
    if (short) {
      for (let k = 0; k <= RUN_AHEAD_MAX; k++) need[k] = 0;
      const { blocks, computed } = batch;
      for (let i = 0; i < n; i++) {
        // Pass p (p >= 1 after this one) needs room for computed + p + 1 tokens.
        const p = blockSize * (blocks[i] as number) - (computed[i] as number);
        if (p <= RUN_AHEAD_MAX) need[p] = (need[p] as number) + 1;
      }
    }
    const ends = this.#ends;
    const shape = this.#shape;
    shape.numSeqs = n;
    shape.numTokens = n;
    shape.numDecodeSeqs = n;
    shape.numPrefillTokens = 0;
    shape.prefillAttentionTokens2 = 0;
    ends[0] = firstEndUs;
    let demand = 0;
    let ctx = contextTokens;
    for (let j = 1; j < count; j++) {
      if (short) {
        demand += need[j] as number;
        if (demand > freeBlocks) {
          count = j;
          break;
        }
      }
      const startUs = ends[j - 1] as number;
      ctx += n;
      shape.contextTokens = ctx;
      ends[j] = startUs + durationUs(shape, startUs, j);
    }
    if (count < 2) return;
    this.#count = count;
  }

  /** Planned batches that end before the last one and are not applied yet. */
  pending(): number {
    return this.#count === 0 ? 0 : this.#count - 1 - this.#done;
  }

  /**
   * Counts as applied the pending batches that end before `nowMs` (or at it, with
   * `inclusive`). @returns how many
   */
  due(nowMs: number, inclusive: boolean): number {
    if (this.#count === 0) return 0;
    const last = this.#count - 1;
    let n = 0;
    while (this.#done < last) {
      const at = (this.#ends[this.#done] as number) / US_PER_MS;
      if (at > nowMs || (at === nowMs && !inclusive)) break;
      this.#done++;
      n++;
    }
    return n;
  }

  /** Batches applied so far (the index of the one in flight). */
  applied(): number {
    return this.#done;
  }

  /** When planned batch `index` ends, µs (an integer). */
  endUs(index: number): number {
    return this.#ends[index] as number;
  }

  /** When the batch now in flight started: the completion time of the last applied batch, ms. */
  lastAppliedStartMs(): number {
    return (this.#ends[this.#done - 1] as number) / US_PER_MS;
  }

  /** When the batch now in flight ends, ms. */
  inFlightEndMs(): number {
    return (this.#ends[this.#done] as number) / US_PER_MS;
  }

  /** When the last planned batch ends (ms), or null when nothing is planned. */
  lastEndMs(): number | null {
    return this.#count === 0 ? null : (this.#ends[this.#count - 1] as number) / US_PER_MS;
  }

  /** Forgets the plan; the batch in flight stays (the engine keeps its end). */
  drop(): void {
    this.#count = 0;
    this.#done = 0;
  }
}
