/**
 * Engine metrics with vLLM's semantics and bucket boundaries (vllm-project/vllm
 * `vllm/v1/metrics/loggers.py`; see sim-anchors.md §3). Gauges hold the values of the last
 * step; counters and histograms accumulate from the last (re)start. Times are observed in
 * seconds, as vLLM does.
 */
import type { FinishReason } from './types.js';

/** `vllm:time_to_first_token_seconds` buckets, s. */
export const TTFT_BUCKETS_S: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
  2560,
];

/** `vllm:inter_token_latency_seconds` (formerly `time_per_output_token_seconds`) buckets, s. */
export const ITL_BUCKETS_S: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
];

/** Buckets of the request-interval histograms (e2e, queue, prefill, decode, inference), s. */
export const REQUEST_LATENCY_BUCKETS_S: readonly number[] = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];

/** vLLM's `build_1_2_5_buckets(max_value)`: 1, 2, 5, 10, 20, 50, ... up to `maxValue`. */
export function build125Buckets(maxValue: number): number[] {
  const out: number[] = [];
  for (let exponent = 0; ; exponent++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** exponent;
      if (v > maxValue) return out;
      out.push(v);
    }
  }
}

/** A histogram's state: per-bucket (not cumulative) counts; the last count is the +Inf bucket. */
export interface HistogramSnapshot {
  /** Upper bounds (inclusive), ascending, without +Inf. */
  readonly bounds: readonly number[];
  /** Observations per bucket; length bounds.length + 1. */
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** A Prometheus-style histogram: an observation v lands in the first bucket with v ≤ le. */
export class Histogram {
  readonly bounds: readonly number[];
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.#counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const at = this.#bucketOf(value);
    this.#counts[at] = (this.#counts[at] as number) + 1;
    this.#sum += value;
    this.#count++;
  }

  /**
   * Records `n` observations of the same value at once: the counts are those of `n` calls to
   * {@link observe}, the sum grows by `n · value` (which may differ from `n` separate
   * additions in the last bits).
   */
  observeMany(value: number, n: number): void {
    const at = this.#bucketOf(value);
    this.#counts[at] = (this.#counts[at] as number) + n;
    this.#sum += n * value;
    this.#count += n;
  }

  /** Index of the first bucket whose bound is >= `value` (the +Inf bucket if none). */
  #bucketOf(value: number): number {
    const b = this.bounds;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (value <= (b[mid] as number)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  snapshot(): HistogramSnapshot {
    return { bounds: this.bounds, counts: [...this.#counts], sum: this.#sum, count: this.#count };
  }
}

/** Everything an engine reports, in vLLM's terms plus a few simulator-only counts. */
export interface EngineMetricsSnapshot {
  /** `model_name` label. */
  readonly modelName: string;
  /** `engine` label (vLLM's data-parallel engine index). */
  readonly engineIndex: string;
  /** `vllm:num_requests_running`, as of the last step. */
  readonly numRequestsRunning: number;
  /** `vllm:num_requests_waiting`, as of the last step (preempted requests included). */
  readonly numRequestsWaiting: number;
  /** `vllm:kv_cache_usage_perc` (a 0–1 fraction despite the name), as of the last step. */
  readonly kvCacheUsage: number;
  /** `vllm:num_preemptions_total`. */
  readonly numPreemptions: number;
  /** `vllm:prompt_tokens_total`, counted when a request's prefill completes. */
  readonly promptTokens: number;
  /** `vllm:generation_tokens_total`, every token emitted. */
  readonly generationTokens: number;
  /** `vllm:request_success_total` by `finished_reason`. */
  readonly requestSuccess: Readonly<Record<FinishReason, number>>;
  readonly timeToFirstTokenSeconds: HistogramSnapshot;
  readonly interTokenLatencySeconds: HistogramSnapshot;
  readonly e2eRequestLatencySeconds: HistogramSnapshot;
  readonly requestQueueTimeSeconds: HistogramSnapshot;
  readonly requestInferenceTimeSeconds: HistogramSnapshot;
  readonly requestPrefillTimeSeconds: HistogramSnapshot;
  readonly requestDecodeTimeSeconds: HistogramSnapshot;
  readonly requestPromptTokens: HistogramSnapshot;
  readonly requestGenerationTokens: HistogramSnapshot;
  /** `vllm:cache_config_info` labels. */
  readonly cacheConfig: {
    readonly blockSize: number;
    readonly numGpuBlocks: number;
    readonly gpuMemoryUtilization: number;
  };
  /** Simulator only: output tokens made for requests that were then aborted (work for nobody). */
  readonly abortedGeneratedTokens: number;
  /** Simulator only: tokens computed (prefill, recompute and decode) for requests that were then aborted. */
  readonly abortedComputedTokens: number;
  /** Simulator only: engine steps (batches) started. */
  readonly engineSteps: number;
}

/** Per-request timestamps the recorder needs at finish, ms. */
export interface RequestTimes {
  readonly arrivalMs: number;
  readonly firstScheduledMs: number;
  readonly firstTokenMs: number;
  readonly lastTokenMs: number;
}

/** Accumulates an engine's metrics. */
export class EngineMetricsRecorder {
  readonly #modelName: string;
  readonly #engineIndex: string;
  readonly #cacheConfig: EngineMetricsSnapshot['cacheConfig'];
  readonly #maxModelLen: number;
  running = 0;
  waiting = 0;
  kvCacheUsage = 0;
  numPreemptions = 0;
  promptTokens = 0;
  generationTokens = 0;
  abortedGeneratedTokens = 0;
  abortedComputedTokens = 0;
  engineSteps = 0;
  readonly requestSuccess: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0 };
  readonly ttft = new Histogram(TTFT_BUCKETS_S);
  readonly itl = new Histogram(ITL_BUCKETS_S);
  readonly e2e = new Histogram(REQUEST_LATENCY_BUCKETS_S);
  readonly queue = new Histogram(REQUEST_LATENCY_BUCKETS_S);
  readonly inference = new Histogram(REQUEST_LATENCY_BUCKETS_S);
  readonly prefill = new Histogram(REQUEST_LATENCY_BUCKETS_S);
  readonly decode = new Histogram(REQUEST_LATENCY_BUCKETS_S);
  readonly promptLen: Histogram;
  readonly generationLen: Histogram;

  constructor(
    modelName: string,
    engineIndex: string,
    cacheConfig: EngineMetricsSnapshot['cacheConfig'],
    maxModelLen: number,
  ) {
    this.#modelName = modelName;
    this.#engineIndex = engineIndex;
    this.#cacheConfig = cacheConfig;
    this.#maxModelLen = maxModelLen;
    const tokenBuckets = build125Buckets(maxModelLen);
    this.promptLen = new Histogram(tokenBuckets);
    this.generationLen = new Histogram(tokenBuckets);
  }

  /** A recorder with the same labels and nothing counted (process restart). */
  fresh(): EngineMetricsRecorder {
    return new EngineMetricsRecorder(
      this.#modelName,
      this.#engineIndex,
      this.#cacheConfig,
      this.#maxModelLen,
    );
  }

  /** Records a request that completed normally. */
  recordFinished(
    reason: 'stop' | 'length',
    t: RequestTimes,
    promptTokens: number,
    outputTokens: number,
  ): void {
    this.requestSuccess[reason]++;
    this.e2e.observe((t.lastTokenMs - t.arrivalMs) / 1000);
    this.queue.observe((t.firstScheduledMs - t.arrivalMs) / 1000);
    this.inference.observe((t.lastTokenMs - t.firstScheduledMs) / 1000);
    this.prefill.observe((t.firstTokenMs - t.firstScheduledMs) / 1000);
    this.decode.observe((t.lastTokenMs - t.firstTokenMs) / 1000);
    this.promptLen.observe(promptTokens);
    this.generationLen.observe(outputTokens);
  }

  snapshot(): EngineMetricsSnapshot {
    return {
      modelName: this.#modelName,
      engineIndex: this.#engineIndex,
      numRequestsRunning: this.running,
      numRequestsWaiting: this.waiting,
      kvCacheUsage: this.kvCacheUsage,
      numPreemptions: this.numPreemptions,
      promptTokens: this.promptTokens,
      generationTokens: this.generationTokens,
      requestSuccess: { ...this.requestSuccess },
      timeToFirstTokenSeconds: this.ttft.snapshot(),
      interTokenLatencySeconds: this.itl.snapshot(),
      e2eRequestLatencySeconds: this.e2e.snapshot(),
      requestQueueTimeSeconds: this.queue.snapshot(),
      requestInferenceTimeSeconds: this.inference.snapshot(),
      requestPrefillTimeSeconds: this.prefill.snapshot(),
      requestDecodeTimeSeconds: this.decode.snapshot(),
      requestPromptTokens: this.promptLen.snapshot(),
      requestGenerationTokens: this.generationLen.snapshot(),
      cacheConfig: this.#cacheConfig,
      abortedGeneratedTokens: this.abortedGeneratedTokens,
      abortedComputedTokens: this.abortedComputedTokens,
      engineSteps: this.engineSteps,
    };
  }
}
