/**
 * Hardware-and-model profiles for the roofline step-time model, and vLLM's engine limits for
 * each deployment. The profiles are held to published sweeps by `fidelity.test.ts` (the
 * points and their sources are in `published.ts`; the table is docs/engine-fidelity.md).
 *
 * - P, W (BF16 weight bytes): model configs (Llama-3.1-8B 8.03e9 / 16.1 GB; 70B 70.6e9 / 141 GB).
 * - L, d, KV bytes per token: llm-d-inference-sim `docs/latency-profiles.md` (8B: 32, 4096,
 *   128 KiB; 70B: 80, 8192, 320 KiB).
 * - Peak BF16 FLOPS, HBM bandwidth: BLIS (inference-sim/inference-sim) `hardware_config.json`
 *   (H100 989.5 TFLOPS, 3.35 TB/s; A100 312 TFLOPS, 2.039 TB/s for the 80 GB part); the
 *   A100-40GB's 1.555 TB/s is NVIDIA's A100 datasheet figure.
 * - MFU: H100 0.45 (BLIS mfuPrefill; with it the 256-token prefill of the InferenceBench
 *   sweep, https://yobitelcomm.github.io/bench/recipes/concurrency-sweep/, gives its c = 1
 *   TTFT within 1%); A100 0.6, from Vidur's profiled Llama-3-8B linear layers on A100
 *   (microsoft/vidur data/profiling, ≈ 146 ms for 2048 tokens, i.e. ≈ 0.7 before attention
 *   and the LM head).
 * - Memory efficiency η 0.80: fitted to batch-1 TPOT (InferenceBench H100 8B 6.48 ms;
 *   johnmusgrave.com "vLLM throughput-latency sweep on NVIDIA A100", A100-40GB 8B 13.3 ms).
 * - Step overhead 0.6 ms (8B) / 1.0 ms (70B), per-sequence GPU work 5 µs: BLIS β₅–β₇ (per-step
 *   126 µs, per-layer 32 µs, per-request 4 µs) as an upper bound, then fit.
 * - Host work per sequence 0.7 ms: fitted to InferenceBench c = 16 and 64 (TPOT 10.94 and
 *   46.91 ms, output flat at 1.38k / 1.31k tokens/s: the host-bound plateau). Kept (decision
 *   in docs/decisions.md): `sluice calibrate` fits it again from the same sweep's result files
 *   at 0.68-0.70 ms (`sim/engine/calibrate.test.ts` pins it within 10% of 0.7), and it is a
 *   fitted term of every calibrated profile file (`hostPerSeqMs`), so a deployment whose host
 *   is faster or slower gets its own value from its own results. The vLLM blog
 *   "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction" (2024-09-05,
 *   https://blog.vllm.ai/2024/09/05/perf-update.html) measured API server plus scheduling at
 *   62% of Llama-3-8B's time on one H100: the host, not the GPU, bounds small models. The same
 *   value stands in the other profiles, whose published points do not reach the plateau.
 * - All-reduce 15 µs (H100) / 20 µs (A100): assumption, BLIS β₄ ≈ 0.75 × analytical; the 70B
 *   TP4 H100 result is checked against Lambda's vllm-benchmark (TPOT 18.12 ms at 8 sequences).
 * - API/frontend overhead 4 ms: fitted to InferenceBench's c = 1 TTFT (13.98 ms = frontend +
 *   one 256-token prefill step of ≈ 9.9 ms); BLIS α₀ = 15.6 ms is an upper reference.
 * - Variability: step-time jitter lognormal σ 0.03 (`jitter.ts`: InferenceBench c = 1 TTFT
 *   p99/p50 = 1.069 = exp(2.326σ)); frontend delay lognormal σ 0.1 per request.
 * - max_num_seqs / max_num_batched_tokens: vLLM `vllm/engine/arg_utils.py` `get_batch_defaults`
 *   (≥ 70 GiB and not A100: 1024 / 8192; otherwise 256 / 2048).
 * - GPU blocks: derived, 0.9·HBM − W/TP − ~3 GB activations, divided by KV bytes per token and 16
 *   (A100-40GB: 36 − 16.1 − 3 ≈ 16.9 GB, ≈ 129k tokens, 8,000 blocks).
 */

/** Parameters of the roofline step-time model (see `step-time.ts`). */
export interface RooflineParams {
  /** Model parameter count P. */
  readonly paramCount: number;
  /** Model weight bytes W (all GPUs together). */
  readonly weightBytes: number;
  /** Transformer layers L. */
  readonly numLayers: number;
  /** Hidden size d. */
  readonly hiddenSize: number;
  /** KV-cache bytes per token (all layers, all GPUs together). */
  readonly kvBytesPerToken: number;
  /** Tensor-parallel degree TP (GPUs per engine). */
  readonly tensorParallel: number;
  /** Peak dense BF16 FLOP/s per GPU, TF. */
  readonly peakFlopsPerSec: number;
  /** HBM bandwidth per GPU, bytes/s, BW. */
  readonly memBandwidthBytesPerSec: number;
  /** Model FLOPs utilisation for the compute term, 0–1. */
  readonly mfu: number;
  /** Achieved fraction of HBM bandwidth for the memory term, 0–1 (η_mem). */
  readonly memEfficiency: number;
  /** Fixed cost per engine step, ms (t_step0). */
  readonly stepOverheadMs: number;
  /** Cost per scheduled sequence per step, ms (t_seq). */
  readonly perSeqOverheadMs: number;
  /** Cost of one all-reduce, ms (t_ar); two per layer when TP > 1. */
  readonly allReduceMs: number;
  /**
   * Host (CPU) work per scheduled sequence per step, ms (t_host): input preparation, output
   * processing, detokenisation and streaming. It overlaps the GPU's work, so a step lasts
   * the longer of the two (see `step-time.ts`).
   */
  readonly hostPerSeqMs: number;
}

/** vLLM engine limits (CLI flags of the same names). */
export interface EngineLimits {
  /** `--max-num-seqs`: most requests in RUNNING at once. */
  readonly maxNumSeqs: number;
  /** `--max-num-batched-tokens`: token budget of one step. */
  readonly maxNumBatchedTokens: number;
  /** `--block-size`: tokens per KV block. @default 16 */
  readonly blockSize: number;
  /** `num_gpu_blocks`: KV blocks that fit in memory. */
  readonly numGpuBlocks: number;
  /** `--max-model-len`: longest prompt + output accepted, tokens. */
  readonly maxModelLen: number;
  /** `--long-prefill-token-threshold`: cap on one request's prefill chunk; 0 = off. @default 0 */
  readonly longPrefillTokenThreshold: number;
  /** `--gpu-memory-utilization` (reported in `vllm:cache_config_info` only). @default 0.9 */
  readonly gpuMemoryUtilization: number;
}

/** A named deployment: model on hardware, with its timing and limits. */
export interface DeploymentProfile {
  /** Model name as served (`model_name` label). */
  readonly modelName: string;
  /** Hardware description, e.g. "1x H100-80GB". */
  readonly hardware: string;
  readonly roofline: RooflineParams;
  readonly limits: EngineLimits;
  /** Frontend (API server, tokenisation) delay before a request reaches the engine, ms, when the frontend is idle. */
  readonly apiOverheadMs: number;
  /**
   * Frontend work per streamed output token, ms: lengthens the frontend delay under load
   * (`frontend.ts`); fitted by `sluice calibrate`.
   */
  readonly frontendPerTokenMs: number;
  /** σ of the lognormal per-step jitter of the step time (`jitter.ts`); 0 = none. */
  readonly stepJitterSigma: number;
  /** σ of the lognormal per-request jitter of the frontend delay; 0 = none. */
  readonly apiJitterSigma: number;
}

const H100 = { peakFlopsPerSec: 989.5e12, memBandwidthBytesPerSec: 3.35e12, mfu: 0.45 } as const;
const A100_80G = { peakFlopsPerSec: 312e12, memBandwidthBytesPerSec: 2.039e12, mfu: 0.6 } as const;
const A100_40G = { ...A100_80G, memBandwidthBytesPerSec: 1.555e12 } as const;

const LLAMA_8B = {
  paramCount: 8.03e9,
  weightBytes: 16.1e9,
  numLayers: 32,
  hiddenSize: 4096,
  kvBytesPerToken: 128 * 1024,
} as const;

const LLAMA_70B = {
  paramCount: 70.6e9,
  weightBytes: 141e9,
  numLayers: 80,
  hiddenSize: 8192,
  kvBytesPerToken: 320 * 1024,
} as const;

const COMMON_TIMING = { memEfficiency: 0.8, perSeqOverheadMs: 0.005, hostPerSeqMs: 0.7 } as const;
/**
 * `frontendPerTokenMs` 0.55 ms: the work of vLLM's Python frontend per streamed token
 * (detokenise, frame the SSE chunk, write), a property of the software and the host CPU, not
 * of the GPU, so shared by every profile. It is set by the one published point that separates
 * it: InferenceBench's H100 8B sweep at concurrency 16, TTFT p50 41.69 ms = 3.8 steps of
 * 10.94 ms (https://yobitelcomm.github.io/bench/recipes/concurrency-sweep/), where ≈ 1.4k
 * tokens/s take ≈ 75% of the frontend and a new request's 4 ms of frontend work then takes
 * ≈ 16 ms (`frontend.ts`); 0.5-0.6 all meet the fidelity tolerances (docs/engine-fidelity.md).
 */
const COMMON_VARIABILITY = {
  apiOverheadMs: 4,
  frontendPerTokenMs: 0.55,
  stepJitterSigma: 0.03,
  apiJitterSigma: 0.1,
} as const;

const LARGE_GPU_LIMITS = { maxNumSeqs: 1024, maxNumBatchedTokens: 8192 } as const;
const A100_LIMITS = { maxNumSeqs: 256, maxNumBatchedTokens: 2048 } as const;
const COMMON_LIMITS = {
  blockSize: 16,
  maxModelLen: 131_072,
  longPrefillTokenThreshold: 0,
  gpuMemoryUtilization: 0.9,
} as const;

/** The built-in deployments, by id. */
export const DEPLOYMENT_PROFILES = {
  /**
   * Llama-3.1-8B on one H100-80GB: decode floor ≈ 6.6 ms, prefill ≈ 36 µs/token; host-bound
   * past ≈ 9 running sequences (0.7 ms each), output ≈ 1.4k tokens/s at the plateau.
   */
  'llama-3.1-8b-h100': {
    modelName: 'meta-llama/Llama-3.1-8B-Instruct',
    hardware: '1x H100-80GB',
    roofline: {
      ...LLAMA_8B,
      ...H100,
      ...COMMON_TIMING,
      tensorParallel: 1,
      stepOverheadMs: 0.6,
      allReduceMs: 0,
    },
    limits: { ...COMMON_LIMITS, ...LARGE_GPU_LIMITS, numGpuBlocks: 27_500 },
    ...COMMON_VARIABILITY,
  },
  /** Llama-3.1-8B on one A100-80GB: decode floor ≈ 10.5 ms, prefill ≈ 86 µs/token. */
  'llama-3.1-8b-a100-80g': {
    modelName: 'meta-llama/Llama-3.1-8B-Instruct',
    hardware: '1x A100-80GB',
    roofline: {
      ...LLAMA_8B,
      ...A100_80G,
      ...COMMON_TIMING,
      tensorParallel: 1,
      stepOverheadMs: 0.6,
      allReduceMs: 0,
    },
    limits: { ...COMMON_LIMITS, ...A100_LIMITS, numGpuBlocks: 27_500 },
    ...COMMON_VARIABILITY,
  },
  /** Llama-3.1-8B on one A100-40GB: decode floor ≈ 13.5 ms (measured 13.3 ms), prefill ≈ 86 µs/token. */
  'llama-3.1-8b-a100-40g': {
    modelName: 'meta-llama/Llama-3.1-8B-Instruct',
    hardware: '1x A100-40GB',
    roofline: {
      ...LLAMA_8B,
      ...A100_40G,
      ...COMMON_TIMING,
      tensorParallel: 1,
      stepOverheadMs: 0.6,
      allReduceMs: 0,
    },
    limits: { ...COMMON_LIMITS, ...A100_LIMITS, numGpuBlocks: 8_000 },
    ...COMMON_VARIABILITY,
  },
  /** Llama-3.1-70B, TP4 on H100-80GB: decode floor ≈ 17 ms, prefill ≈ 12.6k tokens/s. */
  'llama-3.1-70b-tp4-h100': {
    modelName: 'meta-llama/Llama-3.1-70B-Instruct',
    hardware: '4x H100-80GB (TP4)',
    roofline: {
      ...LLAMA_70B,
      ...H100,
      ...COMMON_TIMING,
      tensorParallel: 4,
      stepOverheadMs: 1.0,
      allReduceMs: 0.015,
    },
    limits: { ...COMMON_LIMITS, ...LARGE_GPU_LIMITS, numGpuBlocks: 28_750 },
    ...COMMON_VARIABILITY,
  },
  /** Llama-3.1-70B, TP4 on A100-80GB: decode floor ≈ 26 ms. */
  'llama-3.1-70b-tp4-a100-80g': {
    modelName: 'meta-llama/Llama-3.1-70B-Instruct',
    hardware: '4x A100-80GB (TP4)',
    roofline: {
      ...LLAMA_70B,
      ...A100_80G,
      ...COMMON_TIMING,
      tensorParallel: 4,
      stepOverheadMs: 1.0,
      allReduceMs: 0.02,
    },
    limits: { ...COMMON_LIMITS, ...A100_LIMITS, numGpuBlocks: 28_750 },
    ...COMMON_VARIABILITY,
  },
} as const satisfies Record<string, DeploymentProfile>;

/** Id of a built-in deployment profile. */
export type DeploymentProfileId = keyof typeof DEPLOYMENT_PROFILES;
