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
import type { BatchShape } from './step-time.js';

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

/** The plan for one step. `seqs[i]` computes `newTokens[i]` tokens. */
export interface StepPlan<S extends SchedSeq> {
  readonly seqs: S[];
  readonly newTokens: number[];
  /** Requests moved from WAITING to RUNNING in this pass. */
  readonly admitted: S[];
  readonly preempted: S[];
  readonly shape: BatchShape;
}

/**
 * Forms the next batch, mutating `running`, `waiting`, `kv` and the sequences' block counts
 * (but not their computed tokens, which advance when the step completes).
 */
export function scheduleStep<S extends SchedSeq>(
  running: S[],
  waiting: Deque<S>,
  kv: BlockPool,
  limits: SchedulerLimits,
): StepPlan<S> {
  const seqs: S[] = [];
  const newTokens: number[] = [];
  const admitted: S[] = [];
  const preempted: S[] = [];
  let budget = limits.maxNumBatchedTokens;

  let i = 0;
  while (i < running.length && budget > 0) {
    const seq = running[i] as S;
    const n = chunkSize(seq, budget, limits);
    let scheduled = false;
    for (;;) {
      const need = blocksFor(seq.numComputedTokens + n, limits.blockSize) - seq.numBlocks;
      if (kv.tryAllocate(Math.max(0, need))) {
        seq.numBlocks += Math.max(0, need);
        scheduled = true;
        break;
      }
      const victim = running.pop() as S;
      kv.release(victim.numBlocks);
      victim.numBlocks = 0;
      victim.numComputedTokens = 0;
      waiting.pushFront(victim);
      preempted.push(victim);
      if (victim === seq) break;
    }
    if (!scheduled) break;
    seqs.push(seq);
    newTokens.push(n);
    budget -= n;
    i++;
  }

  if (preempted.length === 0) {
    while (waiting.length > 0 && running.length < limits.maxNumSeqs && budget > 0) {
      const seq = waiting.peekFront() as S;
      const n = chunkSize(seq, budget, limits);
      const need = blocksFor(seq.numComputedTokens + n, limits.blockSize) - seq.numBlocks;
      if (!kv.tryAllocate(Math.max(0, need))) break;
      seq.numBlocks += Math.max(0, need);
      waiting.popFront();
      running.push(seq);
      admitted.push(seq);
      seqs.push(seq);
      newTokens.push(n);
      budget -= n;
    }
  }

  return { seqs, newTokens, admitted, preempted, shape: batchShape(seqs, newTokens) };
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
