/**
 * One scheduling pass of vLLM's V1 scheduler (`vllm/v1/core/sched/scheduler.py`, FCFS policy),
 * reduced to token counts:
 *
 * 1. Start with a token budget of `max_num_batched_tokens`.
 * 2. Walk RUNNING in order. Each request asks for the tokens it has not computed yet (1 for a
 *    decode, the rest of its prompt for a prefill, capped by the budget and by
 *    `long_prefill_token_threshold`). If its KV blocks cannot be allocated, preempt the newest
 *    RUNNING request (`running.pop()`): free its blocks, reset its computed tokens to 0 and
 *    put it at the FRONT of WAITING; repeat. If the newest is the request itself, stop.
 * 3. Only if nothing was preempted, admit from the front of WAITING while RUNNING has fewer
 *    than `max_num_seqs`, the budget lasts and the blocks fit (a partial prefill chunk is fine).
 */
import type { Deque } from './deque.js';
import type { BlockPool } from './kv-cache.js';
import { blocksFor } from './kv-cache.js';
import type { RunningBatch, Seq } from './running-batch.js';
import type { BatchShape } from './step-time.js';
import type { EngineRequest } from './types.js';

/** The scheduler's view of a request. */
export interface SchedSeq {
  /** Prompt + output tokens so far; the newest output token is not computed yet. */
  numTokens: number;
  /** Tokens whose KV is computed (reset to 0 by preemption). */
  numComputedTokens: number;
  /** KV blocks held. */
  numBlocks: number;
}

/** Scheduler limits (the vLLM flags of the same names). */
export interface SchedulerLimits {
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly blockSize: number;
  /** 0 = no per-request cap on prefill chunks. */
  readonly longPrefillTokenThreshold: number;
}

/**
 * The plan for one step: `seqs[i]` computes `newTokens[i]` tokens, for i < `count`. The
 * engine keeps one plan and passes it to every pass, so nothing is allocated per step: the
 * contents are valid until the next pass.
 */
export class StepPlan<S extends SchedSeq> {
  /** Scheduled sequences. They are always a prefix of RUNNING, in its order. */
  count = 0;
  /** Entries past `count` are undefined (a finished request is not kept alive here). */
  readonly seqs: (S | undefined)[] = [];
  readonly newTokens: number[] = [];
  /** `seqs[admittedFrom .. count)` moved from WAITING to RUNNING in this pass. */
  admittedFrom = 0;
  /** Requests preempted in this pass (a new array after any pass that preempted). */
  preempted: S[] = [];
  /** The batch's shape, summed as the pass schedules. */
  readonly shape: MutableBatchShape = {
    numSeqs: 0,
    numTokens: 0,
    numPrefillTokens: 0,
    numDecodeSeqs: 0,
    contextTokens: 0,
    prefillAttentionTokens2: 0,
  };
}

type MutableBatchShape = { -readonly [K in keyof BatchShape]: BatchShape[K] };

/**
 * Forms the next batch into `plan`, mutating `running`, `waiting`, `kv` and the sequences'
 * block counts (but not their computed tokens, which advance when the step completes).
 */
export function scheduleStep<S extends SchedSeq>(
  running: S[],
  waiting: Deque<S>,
  kv: BlockPool,
  limits: SchedulerLimits,
  plan: StepPlan<S> = new StepPlan<S>(),
): StepPlan<S> {
  const blockSize = limits.blockSize;
  const previousCount = plan.count;
  clearPlan(plan);
  let budget = limits.maxNumBatchedTokens;

  let i = 0;
  while (i < running.length && budget > 0) {
    const seq = running[i] as S;
    const n = chunkSize(seq, budget, limits);
    if (!allocateFor(seq, n, kv, blockSize) && !preemptFor(seq, n, running, waiting, kv, blockSize, plan)) {
      break;
    }
    addToPlan(plan, seq, n);
    budget -= n;
    i++;
  }

  plan.admittedFrom = plan.count;
  if (plan.preempted.length === 0) {
    while (waiting.length > 0 && running.length < limits.maxNumSeqs && budget > 0) {
      const seq = waiting.peekFront() as S;
      const n = chunkSize(seq, budget, limits);
      if (!allocateFor(seq, n, kv, blockSize)) break;
      waiting.popFront();
      running.push(seq);
      addToPlan(plan, seq, n);
      budget -= n;
    }
  }
  for (let k = plan.count; k < previousCount; k++) plan.seqs[k] = undefined;
  return plan;
}

function clearPlan<S extends SchedSeq>(plan: StepPlan<S>): void {
  plan.count = 0;
  plan.admittedFrom = 0;
  if (plan.preempted.length > 0) plan.preempted = [];
  const s = plan.shape;
  s.numSeqs = 0;
  s.numTokens = 0;
  s.numPrefillTokens = 0;
  s.numDecodeSeqs = 0;
  s.contextTokens = 0;
  s.prefillAttentionTokens2 = 0;
}

/**
 * Gives `seq` the blocks to hold `n` more computed tokens, if the pool has them. Most calls
 * are decodes that still fit in the last block; they are answered without a division.
 */
function allocateFor(seq: SchedSeq, n: number, kv: BlockPool, blockSize: number): boolean {
  const tokens = seq.numComputedTokens + n;
  if (tokens <= seq.numBlocks * blockSize) return true;
  const need = blocksFor(tokens, blockSize) - seq.numBlocks;
  if (!kv.tryAllocate(need)) return false;
  seq.numBlocks += need;
  return true;
}

/**
 * Preempts the newest RUNNING request (free its blocks, reset its computed tokens, put it at
 * the front of WAITING) until `seq` gets its blocks.
 * @returns false if `seq` itself had to go, which ends the pass over RUNNING
 */
function preemptFor<S extends SchedSeq>(
  seq: S,
  n: number,
  running: S[],
  waiting: Deque<S>,
  kv: BlockPool,
  blockSize: number,
  plan: StepPlan<S>,
): boolean {
  for (;;) {
    const victim = running.pop() as S;
    kv.release(victim.numBlocks);
    victim.numBlocks = 0;
    victim.numComputedTokens = 0;
    waiting.pushFront(victim);
    plan.preempted.push(victim);
    if (victim === seq) return false;
    if (allocateFor(seq, n, kv, blockSize)) return true;
  }
}

/**
 * Appends `seq` to the batch and adds it to the shape. A scheduled sequence's token counts do
 * not change later in the pass (a preemption victim is always unscheduled), so summing here
 * gives what {@link batchShape} would give after the pass, in the same order.
 */
function addToPlan<S extends SchedSeq>(plan: StepPlan<S>, seq: S, n: number): void {
  const k = plan.count++;
  plan.seqs[k] = seq;
  plan.newTokens[k] = n;
  const s = plan.shape;
  const ctx = seq.numComputedTokens;
  s.numSeqs++;
  s.numTokens += n;
  s.contextTokens += ctx;
  if (n === 1 && ctx === seq.numTokens - 1) {
    s.numDecodeSeqs++;
  } else {
    s.numPrefillTokens += n;
    s.prefillAttentionTokens2 += n * (ctx + n / 2);
  }
}

function chunkSize(seq: SchedSeq, budget: number, limits: SchedulerLimits): number {
  let n = seq.numTokens - seq.numComputedTokens;
  if (limits.longPrefillTokenThreshold > 0 && n > limits.longPrefillTokenThreshold) {
    n = limits.longPrefillTokenThreshold;
  }
  return Math.min(n, budget);
}

/** The shape of a planned batch (a sequence is a decode when it computes its last token only). */
export function batchShape(seqs: readonly SchedSeq[], newTokens: readonly number[]): BatchShape {
  let numTokens = 0;
  let numPrefillTokens = 0;
  let numDecodeSeqs = 0;
  let contextTokens = 0;
  let prefillAttentionTokens2 = 0;
  for (let i = 0; i < seqs.length; i++) {
    const seq = seqs[i] as SchedSeq;
    const n = newTokens[i] as number;
    const ctx = seq.numComputedTokens;
    numTokens += n;
    contextTokens += ctx;
    if (n === 1 && ctx === seq.numTokens - 1) {
      numDecodeSeqs++;
    } else {
      numPrefillTokens += n;
      prefillAttentionTokens2 += n * (ctx + n / 2);
    }
  }
  return {
    numSeqs: seqs.length,
    numTokens,
    numPrefillTokens,
    numDecodeSeqs,
    contextTokens,
    prefillAttentionTokens2,
  };
}

/**
 * What {@link scheduleBatch} reports besides the batch itself (which is
 * `batch.newTokens[0 .. batch.planned)`). The engine keeps one and passes it to every pass.
 */
export class BatchPlan<R extends EngineRequest> {
  /** Entries `[admittedFrom, batch.planned)` moved from WAITING to RUNNING in this pass. */
  admittedFrom = 0;
  /** Requests preempted in this pass (a new array after any pass that preempted). */
  preempted: Seq<R>[] = [];
  /** The batch's shape, summed as the pass schedules. */
  readonly shape: MutableBatchShape = {
    numSeqs: 0,
    numTokens: 0,
    numPrefillTokens: 0,
    numDecodeSeqs: 0,
    contextTokens: 0,
    prefillAttentionTokens2: 0,
  };
}

/**
 * {@link scheduleStep} over RUNNING held as a {@link RunningBatch} (the engine's form): the
 * same pass, step for step, reading and writing the batch's arrays instead of sequence
 * objects. Sequences in WAITING are objects; admission copies one into the batch.
 */
export function scheduleBatch<R extends EngineRequest>(
  batch: RunningBatch<R>,
  waiting: Deque<Seq<R>>,
  kv: BlockPool,
  limits: SchedulerLimits,
  plan: BatchPlan<R>,
): void {
  const blockSize = limits.blockSize;
  const threshold = limits.longPrefillTokenThreshold;
  const s = plan.shape;
  if (plan.preempted.length > 0) plan.preempted = [];
  batch.planned = 0;
  let budget = limits.maxNumBatchedTokens;

  // The running entries, as planAt would add them, with the arrays and the shape's sums in
  // locals: nothing in this loop replaces the arrays (a preemption only shortens the batch),
  // and the sums are added in the same order.
  const { numTokens, computed, blocks, newTokens } = batch;
  let numSeqs = 0;
  let numTokensSum = 0;
  let contextTokens = 0;
  let numDecodeSeqs = 0;
  let numPrefillTokens = 0;
  let prefillAttentionTokens2 = 0;
  let i = 0;
  while (i < batch.length && budget > 0) {
    const ctx = computed[i] as number;
    const tokens = numTokens[i] as number;
    let n = tokens - ctx;
    if (threshold > 0 && n > threshold) n = threshold;
    if (n > budget) n = budget;
    if (
      ctx + n > (blocks[i] as number) * blockSize &&
      !allocateAt(batch, i, n, kv, blockSize) &&
      !preemptForAt(batch, i, n, waiting, kv, blockSize, plan)
    ) {
      break;
    }
    newTokens[i] = n;
    numSeqs++;
    numTokensSum += n;
    contextTokens += ctx;
    if (n === 1 && ctx === tokens - 1) {
      numDecodeSeqs++;
    } else {
      numPrefillTokens += n;
      prefillAttentionTokens2 += n * (ctx + n / 2);
    }
    budget -= n;
    i++;
  }
  batch.planned = i;
  s.numSeqs = numSeqs;
  s.numTokens = numTokensSum;
  s.contextTokens = contextTokens;
  s.numDecodeSeqs = numDecodeSeqs;
  s.numPrefillTokens = numPrefillTokens;
  s.prefillAttentionTokens2 = prefillAttentionTokens2;

  plan.admittedFrom = batch.planned;
  if (plan.preempted.length === 0) {
    while (waiting.length > 0 && batch.length < limits.maxNumSeqs && budget > 0) {
      const seq = waiting.peekFront() as Seq<R>;
      const n = chunkSize(seq, budget, limits);
      if (!allocateFor(seq, n, kv, blockSize)) break;
      waiting.popFront();
      planAt(batch, batch.push(seq), n, s);
      budget -= n;
    }
  }
}

/** {@link allocateFor} for batch entry `i`. */
function allocateAt<R extends EngineRequest>(
  batch: RunningBatch<R>,
  i: number,
  n: number,
  kv: BlockPool,
  blockSize: number,
): boolean {
  const tokens = (batch.computed[i] as number) + n;
  const held = batch.blocks[i] as number;
  if (tokens <= held * blockSize) return true;
  const need = blocksFor(tokens, blockSize) - held;
  if (!kv.tryAllocate(need)) return false;
  batch.blocks[i] = held + need;
  return true;
}

/** {@link preemptFor} for batch entry `i`: the newest entries go first. */
function preemptForAt<R extends EngineRequest>(
  batch: RunningBatch<R>,
  i: number,
  n: number,
  waiting: Deque<Seq<R>>,
  kv: BlockPool,
  blockSize: number,
  plan: BatchPlan<R>,
): boolean {
  for (;;) {
    const last = batch.length - 1;
    const victim = batch.pop();
    kv.release(victim.numBlocks);
    victim.numBlocks = 0;
    victim.dropComputed();
    waiting.pushFront(victim);
    plan.preempted.push(victim);
    if (last === i) return false;
    if (allocateAt(batch, i, n, kv, blockSize)) return true;
  }
}

/** {@link addToPlan} for batch entry `i`, which must be the next one (`batch.planned`). */
function planAt<R extends EngineRequest>(
  batch: RunningBatch<R>,
  i: number,
  n: number,
  s: MutableBatchShape,
): void {
  batch.newTokens[i] = n;
  batch.planned = i + 1;
  const ctx = batch.computed[i] as number;
  s.numSeqs++;
  s.numTokens += n;
  s.contextTokens += ctx;
  if (n === 1 && ctx === (batch.numTokens[i] as number) - 1) {
    s.numDecodeSeqs++;
  } else {
    s.numPrefillTokens += n;
    s.prefillAttentionTokens2 += n * (ctx + n / 2);
  }
}
