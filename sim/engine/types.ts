/**
 * The engine port: what a host (the simulator, or an HTTP server on the real clock) sees of a
 * simulated engine. Time is always passed in, in milliseconds; the engine never reads a clock.
 *
 * Host protocol: after every `submit`, `abort` and `step`, read `nextStepAt()`; when it is not
 * null, call `step(t)` at that time t (the host owns the only timer). One host event per
 * engine step, never one per token.
 */
import type { EngineMetricsSnapshot } from './metrics.js';

/** Which part of the work this engine does. */
export type EngineRole =
  /** Prefill and decode (a normal vLLM server). */
  | 'unified'
  /** P/D prefill pool: computes the prompt and finishes each request at its first token. */
  | 'prefill'
  /** P/D decode pool: requests arrive with the prompt's KV and first token already made. */
  | 'decode';

/** vLLM's finish reasons (`finished_reason` label of `vllm:request_success_total`). */
export type FinishReason = 'stop' | 'length' | 'abort';

/** A request as the engine sees it. Hosts may extend it; the same object comes back out. */
export interface EngineRequest {
  /** Unique among the requests the engine currently holds. */
  readonly id: string;
  /** Prompt length, tokens, ≥ 1. */
  readonly promptTokens: number;
  /**
   * Output tokens the request generates in total before it completes, ≥ 1. On a decode-role
   * engine the first of them was made by the prefill engine, so it must be ≥ 2.
   */
  readonly outputTokens: number;
  /** Reason reported when the output completes. @default 'stop' */
  readonly finishReason?: 'stop' | 'length';
  /** Frontend arrival time, ms: start of the TTFT, queue and e2e intervals. @default submit time */
  readonly arrivalMs?: number;
}

/** Why `submit` refused a request. */
export type SubmitRejection =
  /** prompt + output exceeds `max_model_len` or the whole KV cache (vLLM answers HTTP 400). */
  | 'too_long'
  /** Another request with this id is in the engine. */
  | 'duplicate_id'
  /** Token counts are not positive integers, or a decode-role request has nothing to decode. */
  | 'invalid';

/**
 * Result of `submit`: a rejection is a value, not a thrown error. An engine that tracks
 * progress may hand the accepted request's progress over with the acceptance (what
 * {@link TrackedEngine.progress} would return for it), saving the host a lookup.
 */
export type SubmitResult =
  | { readonly accepted: true; readonly progress?: RequestProgress }
  | { readonly accepted: false; readonly reason: SubmitRejection };

/** A request that completed in a step. */
export interface FinishedRequest<R extends EngineRequest> {
  readonly request: R;
  readonly reason: 'stop' | 'length';
  /** Output tokens emitted by this engine for the request. */
  readonly emittedTokens: number;
}

/** The batch an engine started. */
export interface BatchInfo {
  /** Start, ms (= the step call's time). */
  readonly startMs: number;
  /** Duration, ms, rounded to whole microseconds. */
  readonly durationMs: number;
  /** Scheduled sequences. */
  readonly numSeqs: number;
  /** New tokens computed (prefill chunk tokens + one per decode). */
  readonly numTokens: number;
  /** Of those, prefill-chunk tokens. */
  readonly numPrefillTokens: number;
}

/** How far a submitted request has got on one engine. */
export interface RequestProgress {
  /**
   * Output tokens this engine has emitted for the request so far, i.e. the number of steps
   * whose `tokens` listed it. Stays readable after the request finishes, is aborted or is lost
   * in a restart.
   */
  readonly emittedTokens: number;
  /**
   * Hands `sink` the gaps (whole µs) between this engine's consecutive emissions of the
   * request's tokens, and returns when it emitted the first of them (ms; NaN when none). A
   * sink without `watch` gets them in order, during the call; one with it may get the gaps
   * between consecutive steps later, pooled (see {@link GapSink.addManyUs}). Read it when the request finishes on this engine, before the engine steps again: the
   * engine keeps the times of its steps only while a request it holds may need them. Absent
   * from an engine that does not time tokens one by one.
   */
  tokenGaps?(sink: GapSink): number;
}

/** Receives inter-token gaps. */
export interface GapSink {
  /** One gap, in whole microseconds (≥ 0). */
  addUs(us: number): void;
  /**
   * `n` (≥ 1) gaps of `us` whole microseconds. A sink with this and {@link GapSink.watch} lets
   * an engine hand over its gaps late, pooled with other requests' (the ones from consecutive
   * steps: one call per step for all of them); without them, every gap comes through `addUs`
   * during the `tokenGaps` call.
   */
  addManyUs?(us: number, n: number): void;
  /**
   * `source` holds gaps handed to this sink that it has not passed on yet: the sink calls its
   * `settleGaps` before it reads its counts. Called once per source and sink.
   */
  watch?(source: DeferredGaps): void;
}

/** Holds gaps meant for a {@link GapSink} until asked. */
export interface DeferredGaps {
  /** Hands the sink every gap held for it so far. */
  settleGaps(): void;
}

/** What one `step(nowMs)` call did. */
export interface StepOutcome<R extends EngineRequest> {
  /** The step call's time, ms: when the finished batch's tokens are emitted. */
  readonly atMs: number;
  /**
   * Requests that got one output token at `atMs` (at most one each per step). Always empty
   * from an engine configured not to list tokens (`VllmEngineConfig.reportTokens`): such a
   * host counts tokens with {@link TrackedEngine.progress} instead.
   */
  readonly tokens: readonly R[];
  /** Those of `tokens` that got their first token on this engine. */
  readonly firstTokens: readonly R[];
  /** Requests that completed at `atMs`; their KV blocks are already free. */
  readonly finished: readonly FinishedRequest<R>[];
  /** Requests preempted while forming the next batch (they go back to the front of WAITING). */
  readonly preempted: readonly R[];
  /** The batch started at `atMs`, or null if nothing could be scheduled. */
  readonly batch: BatchInfo | null;
}

/** A simulated inference engine, driven by a host that owns the clock. */
export interface Engine<R extends EngineRequest = EngineRequest> {
  /** Queues a request (WAITING) at `nowMs`. */
  submit(request: R, nowMs: number): SubmitResult;
  /**
   * Client cancel at `nowMs`: drops the request wherever it is and frees its KV blocks.
   * @returns the request, or undefined if the engine does not hold it
   */
  abort(id: string, nowMs: number): R | undefined;
  /** When the host must next call `step`, ms; null when there is nothing to do. */
  nextStepAt(): number | null;
  /** Completes the batch in flight (if any) at `nowMs`, then starts the next one. */
  step(nowMs: number): StepOutcome<R>;
  /**
   * Process restart at `nowMs`: every held request is lost, metrics restart from zero and the
   * cold-start window (if any) begins.
   * @returns the requests that were lost
   */
  restart(nowMs: number): R[];
  /** Requests in RUNNING now. */
  readonly numRunning: number;
  /** Requests in WAITING now (preempted ones included). */
  readonly numWaiting: number;
  /** Metrics as vLLM would expose them (gauges as of the last step). */
  metrics(): EngineMetricsSnapshot;
  /**
   * For an engine that plans steps ahead (`VllmEngineConfig.runAhead`): applies the planned
   * steps that end before `nowMs`, or at `nowMs` too with `inclusive`, so that every read and
   * change sees the state those steps leave. @returns the steps applied
   */
  catchUp?(nowMs: number, inclusive: boolean): number;
  /** Forgets the steps planned past the batch in flight (an input of their timing changed). */
  dropRunAhead?(): void;
}

/**
 * An engine that also answers, without per-token work or a metrics snapshot, what a host
 * running many engines at a high request rate asks.
 */
export interface TrackedEngine<R extends EngineRequest = EngineRequest> extends Engine<R> {
  /**
   * The progress of the request `id` the engine holds, or undefined. The object keeps
   * counting while the engine holds the request and stays readable after it leaves.
   */
  progress(id: string): RequestProgress | undefined;
  /** `kv_cache_usage_perc` as of the last step: `metrics().kvCacheUsage` without the snapshot. */
  readonly kvCacheUsage: number;
}
