/**
 * A simulated vLLM V1 engine with continuous batching, chunked prefill, paged KV blocks and
 * recompute preemption, timed one step at a time by a step-time model. Clock-agnostic: the
 * host passes the time into every call (see `types.ts` for the protocol).
 *
 * A step's tokens are emitted when the step completes, i.e. at the next `step(nowMs)` call; a
 * sequence that finishes its last prompt chunk or a decode in that step samples one token.
 * Output tokens already emitted survive preemption; the request then recomputes prompt +
 * outputs before it samples again, as vLLM does.
 */
import type { Rng } from '../kernel/rng.js';
import { Deque } from './deque.js';
import { BlockPool, blocksFor } from './kv-cache.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { EngineMetricsRecorder } from './metrics.js';
import type { EngineLimits } from './profiles.js';
import type { SchedSeq } from './scheduler.js';
import { StepPlan, scheduleStep } from './scheduler.js';
import type { BatchShape, ColdStart, StepTimeModel } from './step-time.js';
import { coldStartMultiplier } from './step-time.js';
import type {
  BatchInfo,
  EngineRequest,
  EngineRole,
  FinishedRequest,
  RequestProgress,
  StepOutcome,
  SubmitResult,
  TrackedEngine,
} from './types.js';

/** Configuration of a {@link VllmEngine}. */
export interface VllmEngineConfig {
  /** `model_name` label. */
  readonly modelName: string;
  /** `engine` label. @default '0' */
  readonly engineIndex?: string;
  /** @default 'unified' */
  readonly role?: EngineRole;
  readonly limits: EngineLimits;
  /** Step duration in ms from the batch shape. */
  readonly stepTime: StepTimeModel;
  /** Slower steps after a (re)start. @default none */
  readonly coldStart?: ColdStart;
  /** When the process started, ms (start of the cold-start window). @default 0 */
  readonly startedAtMs?: number;
  /**
   * List each step's tokens in `StepOutcome.tokens`. A host that only needs counts turns this
   * off and reads {@link VllmEngine.progress} and `FinishedRequest.emittedTokens`: no work per
   * token then reaches the host. @default true
   */
  readonly reportTokens?: boolean;
  /**
   * Return the same outcome object (and batch description) from every `step`, refilled: an
   * outcome is then valid only until the next `step` call. For hosts that handle each outcome
   * at once; saves two allocations per step. @default false
   */
  readonly reuseOutcome?: boolean;
  /** Multiplies each step time by exp(Normal(0, sigma)) drawn from `rng`. @default none */
  readonly jitter?: { readonly sigma: number; readonly rng: Rng };
}

/** Per-request state, for tests and debug endpoints. */
export interface SeqInspection {
  readonly id: string;
  readonly numComputedTokens: number;
  /** Output tokens so far (on a decode-role engine including the one made upstream). */
  readonly generatedTokens: number;
  readonly numBlocks: number;
  readonly preemptions: number;
}

/** A snapshot of the queues and the KV pool. */
export interface EngineInspection {
  readonly running: readonly SeqInspection[];
  readonly waiting: readonly SeqInspection[];
  readonly usedBlocks: number;
  readonly freeBlocks: number;
}

/**
 * A request on the engine. The fields every step touches come first in the object literal
 * (`submit`), so they share cache lines: a step visits every running sequence.
 */
interface Seq<R extends EngineRequest> extends SchedSeq, RequestProgress {
  /** Set when the request leaves the engine (finish or abort) while a batch may hold it. */
  gone: boolean;
  /** Output tokens so far, including any made upstream. */
  generated: number;
  /** `generated` at which the request finishes (1 on a prefill-role engine). */
  readonly finishAt: number;
  /** Output tokens emitted by this engine. */
  emittedTokens: number;
  /** Tokens computed for this request on this engine, recomputation included. */
  computeSpent: number;
  /** The engine's completion count when the request last emitted (see `#complete`). */
  lastTokenStep: number;
  lastTokenMs: number;
  readonly request: R;
  readonly arrivalMs: number;
  preemptions: number;
  firstScheduledMs: number;
  firstTokenMs: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function emptyOutcome<R extends EngineRequest>(): Mutable<StepOutcome<R>> {
  return { atMs: 0, tokens: NONE, firstTokens: NONE, finished: NONE, preempted: NONE, batch: null };
}

function emptyBatchInfo(): Mutable<BatchInfo> {
  return { startMs: 0, durationMs: 0, numSeqs: 0, numTokens: 0, numPrefillTokens: 0 };
}

/** Host calls may be this much early (ms) against `nextStepAt()`, to absorb rounding. */
const EARLY_TOLERANCE_MS = 1e-6;

/**
 * The empty list an outcome reports when a step had nothing of a kind: shared, and frozen so
 * that a push into it throws instead of leaking into other outcomes.
 */
const NONE = Object.freeze([]) as never[];

export class VllmEngine<R extends EngineRequest = EngineRequest> implements TrackedEngine<R> {
  readonly #cfg: VllmEngineConfig;
  readonly #role: EngineRole;
  readonly #reportTokens: boolean;
  readonly #kv: BlockPool;
  readonly #byId = new Map<string, Seq<R>>();
  readonly #waiting = new Deque<Seq<R>>();
  #running: Seq<R>[] = [];
  /** The batch in flight (valid while `#inFlightEndMs` is not NaN), reused by every step. */
  readonly #plan = new StepPlan<Seq<R>>();
  /** When the batch in flight ends, ms; NaN when none is in flight. */
  #inFlightEndMs = Number.NaN;
  /** Batches completed so far, and when the last one completed (ms). */
  #completions = 0;
  #lastCompletionMs = Number.NaN;
  #readyAtMs: number | null = null;
  #startedAtMs: number;
  #metrics: EngineMetricsRecorder;
  // What the step being completed emitted; NONE until something is added.
  #tokens: R[] = NONE;
  #firstTokens: R[] = NONE;
  #finished: FinishedRequest<R>[] = NONE;
  /** With `reuseOutcome`, the objects every step refills. */
  readonly #reused: { outcome: Mutable<StepOutcome<R>>; batch: Mutable<BatchInfo> } | null;

  constructor(config: VllmEngineConfig) {
    const l = config.limits;
    if (l.maxNumBatchedTokens < l.maxNumSeqs) {
      throw new RangeError(
        `max_num_batched_tokens (${l.maxNumBatchedTokens}) must be >= max_num_seqs (${l.maxNumSeqs})`,
      );
    }
    this.#cfg = config;
    this.#role = config.role ?? 'unified';
    this.#reportTokens = config.reportTokens ?? true;
    this.#reused = config.reuseOutcome ? { outcome: emptyOutcome<R>(), batch: emptyBatchInfo() } : null;
    this.#kv = new BlockPool(l.numGpuBlocks);
    this.#startedAtMs = config.startedAtMs ?? 0;
    this.#metrics = new EngineMetricsRecorder(
      config.modelName,
      config.engineIndex ?? '0',
      { blockSize: l.blockSize, numGpuBlocks: l.numGpuBlocks, gpuMemoryUtilization: l.gpuMemoryUtilization },
      l.maxModelLen,
    );
  }

  get numRunning(): number {
    return this.#running.length;
  }

  get numWaiting(): number {
    return this.#waiting.length;
  }

  get kvCacheUsage(): number {
    return this.#metrics.kvCacheUsage;
  }

  submit(request: R, nowMs: number): SubmitResult {
    const { promptTokens: p, outputTokens: o } = request;
    const minOutput = this.#role === 'decode' ? 2 : 1;
    if (!Number.isInteger(p) || !Number.isInteger(o) || p < 1 || o < minOutput) {
      return { accepted: false, reason: 'invalid' };
    }
    if (this.#byId.has(request.id)) return { accepted: false, reason: 'duplicate_id' };
    const l = this.#cfg.limits;
    if (p + o > l.maxModelLen || blocksFor(p + o, l.blockSize) > l.numGpuBlocks) {
      return { accepted: false, reason: 'too_long' };
    }
    const kvArrives = this.#role === 'decode';
    const seq: Seq<R> = {
      numTokens: kvArrives ? p + 1 : p,
      numComputedTokens: kvArrives ? p : 0,
      numBlocks: 0,
      gone: false,
      generated: kvArrives ? 1 : 0,
      finishAt: this.#role === 'prefill' ? 1 : o,
      emittedTokens: 0,
      computeSpent: 0,
      lastTokenStep: -1,
      lastTokenMs: Number.NaN,
      request,
      arrivalMs: request.arrivalMs ?? nowMs,
      preemptions: 0,
      firstScheduledMs: Number.NaN,
      firstTokenMs: Number.NaN,
    };
    this.#byId.set(request.id, seq);
    this.#waiting.pushBack(seq);
    if (Number.isNaN(this.#inFlightEndMs) && this.#readyAtMs === null) this.#readyAtMs = nowMs;
    return { accepted: true };
  }

  abort(id: string, _nowMs: number): R | undefined {
    const seq = this.#byId.get(id);
    if (seq === undefined) return undefined;
    const at = this.#running.indexOf(seq);
    if (at >= 0) this.#running.splice(at, 1);
    else this.#waiting.remove(seq);
    this.#kv.release(seq.numBlocks);
    seq.numBlocks = 0;
    seq.gone = true;
    this.#byId.delete(id);
    const m = this.#metrics;
    m.requestSuccess.abort++;
    m.abortedGeneratedTokens += seq.emittedTokens;
    m.abortedComputedTokens += seq.computeSpent;
    return seq.request;
  }

  progress(id: string): RequestProgress | undefined {
    return this.#byId.get(id);
  }

  nextStepAt(): number | null {
    if (!Number.isNaN(this.#inFlightEndMs)) return this.#inFlightEndMs;
    if (this.#byId.size === 0) return null;
    return this.#readyAtMs;
  }

  step(nowMs: number): StepOutcome<R> {
    this.#tokens = NONE;
    this.#firstTokens = NONE;
    this.#finished = NONE;
    if (!Number.isNaN(this.#inFlightEndMs)) {
      if (nowMs < this.#inFlightEndMs - EARLY_TOLERANCE_MS) {
        throw new RangeError(`step(${nowMs}) called before the batch ends at ${this.#inFlightEndMs} ms`);
      }
      this.#complete(nowMs);
      this.#inFlightEndMs = Number.NaN;
    }

    const plan = scheduleStep(this.#running, this.#waiting, this.#kv, this.#cfg.limits, this.#plan);
    const m = this.#metrics;
    const preempted = plan.preempted;
    for (const seq of preempted) {
      seq.preemptions++;
      m.numPreemptions++;
    }
    for (let i = plan.admittedFrom; i < plan.count; i++) {
      const seq = plan.seqs[i] as Seq<R>;
      if (Number.isNaN(seq.firstScheduledMs)) seq.firstScheduledMs = nowMs;
    }
    let batch: BatchInfo | null = null;
    if (plan.count > 0) {
      const durationMs = this.#stepDurationMs(plan.shape, nowMs);
      this.#inFlightEndMs = nowMs + durationMs;
      this.#readyAtMs = null;
      m.engineSteps++;
      batch = this.#batchInfo(nowMs, durationMs);
    } else {
      // Nothing fit. After a preemption the next pass can admit (vLLM skips admission in a
      // pass that preempted), so retry at once; otherwise wait for a submit or abort.
      this.#readyAtMs = preempted.length > 0 ? nowMs : null;
    }
    m.running = this.#running.length;
    m.waiting = this.#waiting.length;
    m.kvCacheUsage = this.#kv.usage();
    const out = this.#reused?.outcome ?? ({} as Mutable<StepOutcome<R>>);
    out.atMs = nowMs;
    out.tokens = this.#tokens;
    out.firstTokens = this.#firstTokens;
    out.finished = this.#finished;
    out.preempted = preempted.length === 0 ? NONE : preempted.map((s) => s.request);
    out.batch = batch;
    return out;
  }

  /** The started batch's description (the reused object with `reuseOutcome`). */
  #batchInfo(nowMs: number, durationMs: number): BatchInfo {
    const shape = this.#plan.shape;
    const info = this.#reused?.batch ?? ({} as Mutable<BatchInfo>);
    info.startMs = nowMs;
    info.durationMs = durationMs;
    info.numSeqs = shape.numSeqs;
    info.numTokens = shape.numTokens;
    info.numPrefillTokens = shape.numPrefillTokens;
    return info;
  }

  restart(nowMs: number): R[] {
    const lost = [...this.#byId.values()].map((s) => {
      s.gone = true;
      return s.request;
    });
    this.#byId.clear();
    this.#waiting.clear();
    this.#running = [];
    this.#inFlightEndMs = Number.NaN;
    this.#readyAtMs = null;
    this.#kv.reset();
    this.#metrics = this.#metrics.fresh();
    this.#startedAtMs = nowMs;
    return lost;
  }

  metrics(): EngineMetricsSnapshot {
    return this.#metrics.snapshot();
  }

  /** The queues and KV pool right now. */
  inspect(): EngineInspection {
    const view = (s: Seq<R>): SeqInspection => ({
      id: s.request.id,
      numComputedTokens: s.numComputedTokens,
      generatedTokens: s.generated,
      numBlocks: s.numBlocks,
      preemptions: s.preemptions,
    });
    return {
      running: this.#running.map(view),
      waiting: this.#waiting.toArray().map(view),
      usedBlocks: this.#kv.usedBlocks,
      freeBlocks: this.#kv.freeBlocks,
    };
  }

  /**
   * Completes the batch in flight at `nowMs`: advances every scheduled sequence by its
   * tokens, emits a token for each that computed its last one, and retires the finished.
   * This runs for every sequence of every step, so it does no per-token allocation: the
   * inter-token gaps are observed once per run of equal gaps (in a decode batch nearly all
   * sequences last emitted at the previous step's end). A sequence that emitted at the
   * previous completion has its gap from the engine's own record of that time (the same
   * number as its `lastTokenMs`), so the common case reads nothing outside the sequence.
   */
  #complete(nowMs: number): void {
    const completion = ++this.#completions;
    const previousMs = this.#lastCompletionMs;
    this.#lastCompletionMs = nowMs;
    const plan = this.#plan;
    const seqs = plan.seqs;
    const newTokens = plan.newTokens;
    const count = plan.count;
    const m = this.#metrics;
    const itl = m.itl;
    let emitted = 0;
    let anyFinished = false;
    let gapMs = Number.NaN;
    let gapCount = 0;
    for (let i = 0; i < count; i++) {
      const seq = seqs[i] as Seq<R>;
      if (seq.gone) continue;
      const n = newTokens[i] as number;
      seq.numComputedTokens += n;
      seq.computeSpent += n;
      if (seq.numComputedTokens < seq.numTokens) continue;
      seq.generated++;
      seq.numTokens++;
      seq.emittedTokens++;
      emitted++;
      if (this.#reportTokens) this.#addToken(seq.request);
      if (seq.emittedTokens === 1) {
        this.#firstToken(seq, nowMs);
      } else {
        const gap = nowMs - (seq.lastTokenStep === completion - 1 ? previousMs : seq.lastTokenMs);
        if (gap !== gapMs) {
          if (gapCount > 0) itl.observeMany(gapMs / 1000, gapCount);
          gapMs = gap;
          gapCount = 0;
        }
        gapCount++;
      }
      seq.lastTokenStep = completion;
      seq.lastTokenMs = nowMs;
      if (seq.generated >= seq.finishAt) {
        this.#finish(seq);
        anyFinished = true;
      }
    }
    if (gapCount > 0) itl.observeMany(gapMs / 1000, gapCount);
    m.generationTokens += emitted;
    if (anyFinished) this.#dropGone();
  }

  #addToken(request: R): void {
    if (this.#tokens === NONE) this.#tokens = [];
    this.#tokens.push(request);
  }

  #firstToken(seq: Seq<R>, nowMs: number): void {
    const m = this.#metrics;
    seq.firstTokenMs = nowMs;
    if (this.#firstTokens === NONE) this.#firstTokens = [];
    this.#firstTokens.push(seq.request);
    m.promptTokens += seq.request.promptTokens;
    m.ttft.observe((nowMs - seq.arrivalMs) / 1000);
  }

  /** Retires a sequence that emitted its last token; it leaves RUNNING in `#dropGone`. */
  #finish(seq: Seq<R>): void {
    const reason = this.#role === 'prefill' ? 'length' : (seq.request.finishReason ?? 'stop');
    seq.gone = true;
    this.#kv.release(seq.numBlocks);
    seq.numBlocks = 0;
    this.#byId.delete(seq.request.id);
    this.#metrics.recordFinished(reason, seq, seq.request.promptTokens, seq.emittedTokens);
    if (this.#finished === NONE) this.#finished = [];
    this.#finished.push({ request: seq.request, reason, emittedTokens: seq.emittedTokens });
  }

  /** Removes the sequences marked gone from RUNNING, keeping its order (in place). */
  #dropGone(): void {
    const running = this.#running;
    let kept = 0;
    for (let i = 0; i < running.length; i++) {
      const seq = running[i] as Seq<R>;
      if (!seq.gone) running[kept++] = seq;
    }
    running.length = kept;
  }

  #stepDurationMs(shape: BatchShape, nowMs: number): number {
    let ms = this.#cfg.stepTime(shape) * coldStartMultiplier(this.#cfg.coldStart, nowMs - this.#startedAtMs);
    const jitter = this.#cfg.jitter;
    if (jitter !== undefined && jitter.sigma > 0) ms *= jitter.rng.lognormal(0, jitter.sigma);
    return Math.max(1, Math.round(ms * 1000)) / 1000;
  }
}
