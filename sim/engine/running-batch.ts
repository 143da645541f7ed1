/**
 * RUNNING as a struct of arrays, for {@link VllmEngine}.
 *
 * Every step visits every running sequence twice (completing the batch in flight, then
 * forming the next one). With one object per sequence those visits are cache misses on
 * objects scattered over the heap; here the counters a step reads and writes sit in parallel
 * typed arrays, entry `i` of each being the i-th running sequence in RUNNING's order. The
 * {@link Seq} objects keep everything else (the request, timestamps) and, while a sequence
 * is not running, its counters too: {@link RunningBatch.push} copies them in,
 * {@link RunningBatch.writeBack} copies them out.
 *
 * The batch in flight is a prefix of RUNNING (see `scheduler.ts`), so its new tokens are kept
 * here too (`newTokens`, with `planned` entries): removing an entry keeps them aligned.
 */
import type { RequestTimes } from './metrics.js';
import type { StepLog } from './step-log.js';
import type { EngineRequest, GapSink, RequestProgress } from './types.js';

/**
 * A request's timestamps (ms), kept only by an engine with request histograms: the others
 * never read them, and four double fields on every sequence cost four heap boxes apiece.
 */
export class SeqTimes implements RequestTimes {
  firstScheduledMs = Number.NaN;
  firstTokenMs = Number.NaN;
  lastTokenMs = Number.NaN;
  constructor(readonly arrivalMs: number) {}
}

/**
 * A request on the engine. While it runs its counters live in the batch's arrays and the
 * fields here are stale, except through the getter of {@link RequestProgress}. (Its index in
 * the batch is not kept here: the batch would have to write to every sequence it moves.)
 */
export class Seq<R extends EngineRequest> implements RequestProgress {
  /** True while in RUNNING. */
  running = false;
  /** Set when the request leaves the engine (finish, abort or restart). */
  gone = false;
  /** Prompt + output tokens so far; the newest output token is not computed yet. */
  numTokens: number;
  /** Tokens whose KV is computed (reset to 0 by preemption). */
  numComputedTokens: number;
  /** KV blocks held. */
  numBlocks = 0;
  /** Output tokens so far, including any made upstream. */
  generated: number;
  /**
   * Tokens computed on this engine besides `numComputedTokens`: minus those the request arrived
   * with (KV sent from a prefill engine), plus those a preemption threw away. Kept so that no
   * step has to count every sequence's computed tokens twice.
   */
  computeOffset: number;
  /** The engine's completion count when the request last emitted (stale while running). */
  lastTokenStep = -1;
  /** The engine's completion count when the request first emitted on it; -1 before. */
  firstTokenStep = -1;
  /**
   * Where its emissions skipped completions (a preemption, a step it was left out of): pairs
   * (last completion before, first after), oldest first; null while there is none.
   */
  breaks: number[] | null = null;
  preemptions = 0;
  /** Its place among the requests the engine accepted (submit order). */
  order = 0;

  /**
   * @param times its timestamps, with request histograms; else null
   * @param generatedBefore output tokens made upstream (1 on a decode-role engine, else 0)
   * @param finishAt `generated` at which the request finishes
   */
  constructor(
    readonly batch: RunningBatch<R>,
    readonly request: R,
    readonly times: SeqTimes | null,
    numTokens: number,
    numComputedTokens: number,
    readonly generatedBefore: number,
    readonly finishAt: number,
  ) {
    this.numTokens = numTokens;
    this.numComputedTokens = numComputedTokens;
    this.computeOffset = -numComputedTokens;
    this.generated = generatedBefore;
  }

  /** Tokens computed for this request on this engine, recomputation included (while not running). */
  get computeSpent(): number {
    return this.numComputedTokens + this.computeOffset;
  }

  /** Throws away the computed KV (a preemption; the sequence is not running). */
  dropComputed(): void {
    this.computeOffset += this.numComputedTokens;
    this.numComputedTokens = 0;
  }

  /** Notes that the request emitted at completion `at` after last emitting at `last` < at − 1. */
  addBreak(last: number, at: number): void {
    if (this.breaks === null) this.breaks = [];
    this.breaks.push(last, at);
  }

  /** See {@link RequestProgress.tokenGaps}: read from the engine's {@link StepLog}. */
  tokenGaps(sink: GapSink): number {
    const first = this.firstTokenStep;
    if (first < 0) return Number.NaN;
    const b = this.batch;
    const log = b.log;
    const last = this.running ? (b.lastTokenStep[b.indexOf(this)] as number) : this.lastTokenStep;
    let from = first;
    const br = this.breaks;
    if (br !== null) {
      for (let j = 0; j < br.length; j += 2) {
        const before = br[j] as number;
        const after = br[j + 1] as number;
        log.gaps(from, before, sink);
        sink.addUs(log.gapUs(before, after));
        from = after;
      }
    }
    log.gaps(from, last, sink);
    return log.atMs(first);
  }

  /** Output tokens emitted by this engine (live while running). */
  get emittedTokens(): number {
    const g = this.running ? (this.batch.generated[this.batch.indexOf(this)] as number) : this.generated;
    return g - this.generatedBefore;
  }
}

const INITIAL_CAPACITY = 32;

/**
 * Largest token or block count a running entry may hold. The per-entry counts are Int32Arrays,
 * not Float64Arrays: a batch's counters then take half the cache lines, and the step loops read
 * each of them per step for each of 112 engines in bench:sim (about 6 % fewer last-level data
 * misses under cachegrind, BENCHMARKS.md). The engine refuses limits above this.
 */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

export class RunningBatch<R extends EngineRequest> {
  /** The engine's step completion times, which its sequences' token gaps are read from. */
  constructor(readonly log: StepLog) {}
  /** Running sequences. */
  length = 0;
  /** Entries `[0, planned)` are the batch in flight (or being formed). */
  planned = 0;
  seqs: (Seq<R> | undefined)[] = [];
  // Counts below MAX_TOKEN_COUNT (the engine's limits bound them) as int32; the completion
  // ordinal and the time stay doubles.
  numTokens = new Int32Array(INITIAL_CAPACITY);
  computed = new Int32Array(INITIAL_CAPACITY);
  blocks = new Int32Array(INITIAL_CAPACITY);
  generated = new Int32Array(INITIAL_CAPACITY);
  finishAt = new Int32Array(INITIAL_CAPACITY);
  lastTokenStep = new Float64Array(INITIAL_CAPACITY);
  lastTokenMs = new Float64Array(INITIAL_CAPACITY);
  /** Tokens entry i computes in the batch (i < `planned`). */
  newTokens = new Int32Array(INITIAL_CAPACITY);

  /** Appends `seq` (its counters copied in) at the end of RUNNING. @returns its index */
  push(seq: Seq<R>): number {
    const i = this.length;
    if (i === this.numTokens.length) this.#grow();
    this.seqs[i] = seq;
    this.numTokens[i] = seq.numTokens;
    this.computed[i] = seq.numComputedTokens;
    this.blocks[i] = seq.numBlocks;
    this.generated[i] = seq.generated;
    this.finishAt[i] = seq.finishAt;
    this.lastTokenStep[i] = seq.lastTokenStep;
    this.lastTokenMs[i] = seq.times === null ? Number.NaN : seq.times.lastTokenMs;
    seq.running = true;
    this.length = i + 1;
    return i;
  }

  /** The index of `seq`, which must be running (a search: for the rare reads from outside). */
  indexOf(seq: Seq<R>): number {
    const i = this.seqs.indexOf(seq);
    if (i < 0 || i >= this.length) throw new Error('internal: the sequence is not running');
    return i;
  }

  /** Copies entry `i`'s counters back into its sequence, which stops reading the arrays. */
  writeBack(i: number): Seq<R> {
    const seq = this.seqs[i] as Seq<R>;
    seq.numTokens = this.numTokens[i] as number;
    seq.numComputedTokens = this.computed[i] as number;
    seq.numBlocks = this.blocks[i] as number;
    seq.generated = this.generated[i] as number;
    seq.lastTokenStep = this.lastTokenStep[i] as number;
    if (seq.times !== null) seq.times.lastTokenMs = this.lastTokenMs[i] as number;
    seq.running = false;
    return seq;
  }

  /**
   * Entry `i` finished: copies back only its output count and last emission (what
   * {@link Seq.emittedTokens} and {@link Seq.tokenGaps} read), leaving the sequence's other
   * counters stale. It leaves RUNNING in `dropFinished`.
   */
  retire(i: number): Seq<R> {
    const seq = this.seqs[i] as Seq<R>;
    seq.generated = this.generated[i] as number;
    seq.lastTokenStep = this.lastTokenStep[i] as number;
    seq.running = false;
    return seq;
  }

  /** Removes the last entry (written back). */
  pop(): Seq<R> {
    const i = --this.length;
    const seq = this.writeBack(i);
    this.seqs[i] = undefined;
    if (this.planned > i) this.planned = i;
    return seq;
  }

  /** Removes entry `i` (written back), keeping the order of the rest and of the plan. */
  removeAt(i: number): Seq<R> {
    const seq = this.writeBack(i);
    const last = this.length - 1;
    for (let j = i; j < last; j++) this.#move(j + 1, j);
    this.seqs[last] = undefined;
    this.length = last;
    if (i < this.planned) this.planned--;
    return seq;
  }

  /**
   * Removes the entries that generated their last token (their sequences were written back
   * when they finished), keeping the order of the rest. Only a completed step finishes
   * sequences, so no other entry meets `generated >= finishAt`.
   */
  dropFinished(): void {
    const generated = this.generated;
    const finishAt = this.finishAt;
    const n = this.length;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if ((generated[i] as number) >= (finishAt[i] as number)) continue;
      if (kept !== i) this.#move(i, kept);
      kept++;
    }
    for (let i = kept; i < n; i++) this.seqs[i] = undefined;
    this.length = kept;
    if (this.planned > kept) this.planned = kept;
  }

  /**
   * Applies `steps` decode steps to every entry, with the KV blocks each following pass
   * allocates (room for one more token than computed): completions `completedBefore + 1` to
   * `completedBefore + steps`, at each of which every entry emits a token.
   * @returns the blocks newly allocated, which the caller takes from the pool
   */
  advanceDecodes(steps: number, blockSize: number, completedBefore: number): number {
    let allocated = 0;
    const { computed, generated, numTokens, blocks, lastTokenStep } = this;
    const lastStep = completedBefore + steps;
    for (let i = 0; i < this.length; i++) {
      // Every entry emits at each of these completions: a break only if it sat out the one before.
      const last = lastTokenStep[i] as number;
      if (last !== completedBefore) (this.seqs[i] as Seq<R>).addBreak(last, completedBefore + 1);
      lastTokenStep[i] = lastStep;
      const c = (computed[i] as number) + steps;
      computed[i] = c;
      generated[i] = (generated[i] as number) + steps;
      numTokens[i] = (numTokens[i] as number) + steps;
      // A block is outgrown once per blockSize steps: divide only then.
      const held = blocks[i] as number;
      if (c + 1 > held * blockSize) {
        const need = Math.ceil((c + 1) / blockSize);
        allocated += need - held;
        blocks[i] = need;
      }
    }
    return allocated;
  }

  /** Empties RUNNING (restart), writing every entry back. */
  clear(): void {
    for (let i = 0; i < this.length; i++) {
      this.writeBack(i);
      this.seqs[i] = undefined;
    }
    this.length = 0;
    this.planned = 0;
  }

  #move(from: number, to: number): void {
    this.seqs[to] = this.seqs[from];
    this.numTokens[to] = this.numTokens[from] as number;
    this.computed[to] = this.computed[from] as number;
    this.blocks[to] = this.blocks[from] as number;
    this.generated[to] = this.generated[from] as number;
    this.finishAt[to] = this.finishAt[from] as number;
    this.lastTokenStep[to] = this.lastTokenStep[from] as number;
    this.lastTokenMs[to] = this.lastTokenMs[from] as number;
    this.newTokens[to] = this.newTokens[from] as number;
  }

  #grow(): void {
    const n = this.numTokens.length * 2;
    const grown = (a: Float64Array): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    const grownInt = (a: Int32Array): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.numTokens = grownInt(this.numTokens);
    this.computed = grownInt(this.computed);
    this.blocks = grownInt(this.blocks);
    this.generated = grownInt(this.generated);
    this.finishAt = grownInt(this.finishAt);
    this.lastTokenStep = grown(this.lastTokenStep);
    this.lastTokenMs = grown(this.lastTokenMs);
    this.newTokens = grownInt(this.newTokens);
  }
}
