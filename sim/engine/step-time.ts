/**
 * How long one engine step takes, from the shape of its batch.
 *
 * Roofline model (sim-anchors.md §5): with S the scheduled set, N its new tokens, C the
 * tokens already in the KV cache for S, and for each prefill chunk of c tokens after ctx
 * computed ones the causal-attention term c·(ctx + c/2):
 *
 *   T_mem  = (W/TP + kvb/TP · C) / (BW · η_mem)      weights, then the KV of every context token
 *   T_cmp  = (2·P·N + 4·L·d·Σ c·(ctx + c/2)) / (TP · TF · mfu)
 *   T_tp   = TP > 1 ? 2·L·t_ar : 0                    two all-reduces per layer
 *   T_gpu  = t_seq·|S| + max(T_mem, T_cmp) + T_tp      t_seq: per-sequence kernels (sampling)
 *   T_host = t_host·|S|                               per-sequence host work of a step
 *   T_step = t_step0 + max(T_gpu, T_host)
 *
 * What grows with the batch: the KV bytes read for attention over the context (C in T_mem),
 * the prefill chunks mixed into decode steps (N and the attention term in T_cmp), the
 * per-sequence GPU work (t_seq) and the per-sequence host work (t_host: input preparation,
 * output processing, detokenisation and streaming). vLLM overlaps the host work of one step
 * with the GPU work of the next (async output processing since v0.6.0, vLLM blog 2024-09-05,
 * which measured the API server and scheduling at 62% of the time of Llama-3-8B on one H100
 * before that), so a step lasts the longer of the two: flat in the batch size while the GPU
 * is the bottleneck, then linear once the host is.
 *
 * The fitted model is the linear form a + b·N + c·|S| + d·C (DistServe-style, few
 * coefficients, least-squares fit in `fit.ts`).
 */
import type { RooflineParams } from './profiles.js';

/** The shape of one step's batch: all a step-time model may look at. */
export interface BatchShape {
  /** Scheduled sequences |S|. */
  readonly numSeqs: number;
  /** New tokens computed this step, N (1 per decode, chunk size per prefill). */
  readonly numTokens: number;
  /** Of those, tokens in prefill chunks. */
  readonly numPrefillTokens: number;
  /** Sequences doing a one-token decode. */
  readonly numDecodeSeqs: number;
  /** Tokens already in the KV cache for the scheduled sequences, C. */
  readonly contextTokens: number;
  /** Σ over prefill chunks of c·(ctx + c/2), in tokens². */
  readonly prefillAttentionTokens2: number;
}

/** Maps a batch shape to a step duration in ms. */
export type StepTimeModel = (batch: BatchShape) => number;

/** The step-time model for roofline parameters. */
export function rooflineStepTime(p: RooflineParams): StepTimeModel {
  const memBytesPerSec = p.memBandwidthBytesPerSec * p.memEfficiency;
  const flopsPerSec = p.tensorParallel * p.peakFlopsPerSec * p.mfu;
  const tpMs = p.tensorParallel > 1 ? 2 * p.numLayers * p.allReduceMs : 0;
  // The constant parts of the formula, each computed as the formula groups it (so every step
  // time is the same double as evaluating it whole), once instead of at every step.
  const weightPerGpu = p.weightBytes / p.tensorParallel;
  const kvPerTokenPerGpu = p.kvBytesPerToken / p.tensorParallel;
  const flopsPerToken = 2 * p.paramCount;
  const flopsPerAttention = 4 * p.numLayers * p.hiddenSize;
  const { stepOverheadMs, perSeqOverheadMs, hostPerSeqMs } = p;
  return (b) => {
    const memMs = ((weightPerGpu + kvPerTokenPerGpu * b.contextTokens) / memBytesPerSec) * 1000;
    const flops = flopsPerToken * b.numTokens + flopsPerAttention * b.prefillAttentionTokens2;
    const cmpMs = (flops / flopsPerSec) * 1000;
    const gpuMs = perSeqOverheadMs * b.numSeqs + Math.max(memMs, cmpMs) + tpMs;
    return stepOverheadMs + Math.max(gpuMs, hostPerSeqMs * b.numSeqs);
  };
}

/** Coefficients of the fitted linear step-time model, all in ms. */
export interface FittedCoefficients {
  /** Fixed ms per step. */
  readonly a: number;
  /** ms per new token (N). */
  readonly b: number;
  /** ms per scheduled sequence (|S|). */
  readonly c: number;
  /** ms per KV token read (C). */
  readonly d: number;
}

/** The step-time model step_ms = a + b·N + c·|S| + d·C. */
export function fittedStepTime(k: FittedCoefficients): StepTimeModel {
  return (b) => k.a + k.b * b.numTokens + k.c * b.numSeqs + k.d * b.contextTokens;
}

/** Cold-start slowdown: steps are `factor`× slower right after a (re)start, decaying linearly. */
export interface ColdStart {
  /** Slowdown at the instant of (re)start, ≥ 1. */
  readonly factor: number;
  /** How long the slowdown lasts, ms. */
  readonly windowMs: number;
}

/**
 * Step-time multiplier `sinceStartMs` after a (re)start: `factor` at 0, falling linearly to 1
 * at `windowMs`, 1 after.
 */
export function coldStartMultiplier(cold: ColdStart | undefined, sinceStartMs: number): number {
  if (cold === undefined || cold.windowMs <= 0 || sinceStartMs >= cold.windowMs) return 1;
  const left = 1 - Math.max(0, sinceStartMs) / cold.windowMs;
  return 1 + (cold.factor - 1) * left;
}

/** A batch shape of `numSeqs` decodes, each with `contextPerSeq` tokens in KV. */
export function decodeBatch(numSeqs: number, contextPerSeq: number): BatchShape {
  return {
    numSeqs,
    numTokens: numSeqs,
    numPrefillTokens: 0,
    numDecodeSeqs: numSeqs,
    contextTokens: numSeqs * contextPerSeq,
    prefillAttentionTokens2: 0,
  };
}

/** A batch shape of one prefill chunk of `chunk` tokens after `contextTokens` computed ones. */
export function prefillBatch(chunk: number, contextTokens = 0): BatchShape {
  return {
    numSeqs: 1,
    numTokens: chunk,
    numPrefillTokens: chunk,
    numDecodeSeqs: 0,
    contextTokens,
    prefillAttentionTokens2: chunk * (contextTokens + chunk / 2),
  };
}
