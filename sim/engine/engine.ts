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
import { Deque } from './deque.js';
import type { StepJitter } from './jitter.js';
import { BlockPool, blocksFor } from './kv-cache.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { EngineMetricsRecorder } from './metrics.js';
import type { EngineLimits } from './profiles.js';
import { RunAhead } from './run-ahead.js';
import { MAX_TOKEN_COUNT, RunningBatch, Seq, SeqTimes } from './running-batch.js';
import { BatchPlan, scheduleBatch } from './scheduler.js';
import { StepLog } from './step-log.js';
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
   * Return the same outcome object (and batch description) from every `step`, refilled, and
   * the same accepted result from every `submit`: an outcome is then valid only until the
   * next `step` call and a result until the next `submit`. For hosts that handle each at
   * once; saves allocations per step and per request. @default false
   */
  readonly reuseOutcome?: boolean;
  /**
   * Fill the latency and length histograms of the metrics (TTFT, inter-token, e2e, queue,
   * inference, prefill, decode, prompt and generation lengths). A host that reads only the
   * gauges and counters turns this off; the histograms then stay empty. @default true
   */
  readonly histograms?: boolean;
  /**
   * Keep an index of the held requests by id. Without it, `abort(id)` and `progress(id)` search
   * RUNNING and WAITING (linear in the requests held) and `submit` does not refuse a duplicate
   * id: for a host that gives every request a new id and rarely looks one up (the simulator's
   * runs, where the index's upkeep was about a twentieth of the run). @default true
   */
  readonly indexIds?: boolean;
  /**
   * Multiplies step k's time by `jitter.factor(k)` (seeded lognormal, `jitter.ts`): k counts
   * the batches this engine has formed, so run-ahead and one event per step agree. @default none
   */
  readonly jitter?: StepJitter;
  /**
   * Plan runs of uneventful decode steps ahead (see `run-ahead.ts`): `nextStepAt()` is then
   * the end of the last planned step, and the host calls {@link VllmEngine.catchUp} before
   * every other call. The host's clock must keep time in whole microseconds, as the
   * simulator's does (every `nowMs` it passes is an integer number of µs, over 1000): planned
   * start times follow that grid exactly. Needs `reportTokens` and `histograms` off.
   * @default false
   */
  readonly runAhead?: boolean;
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

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function emptyOutcome<R extends EngineRequest>(): Mutable<StepOutcome<R>> {
  return { atMs: 0, tokens: NONE, firstTokens: NONE, finished: NONE, preempted: NONE, batch: null };
}

function emptyBatchInfo(): Mutable<BatchInfo> {
  return { startMs: 0, durationMs: 0, numSeqs: 0, numTokens: 0, numPrefillTokens: 0 };
}

type Accepted = { accepted: true; progress: RequestProgress };

/** Host calls may be this much early (ms) against `nextStepAt()`, to absorb rounding. */
const EARLY_TOLERANCE_MS = 1e-6;
const US_PER_MS = 1000;

/**
 * The empty list an outcome reports when a step had nothing of a kind: shared, and frozen so
 * that a push into it throws instead of leaking into other outcomes.
 */
const NONE = Object.freeze([]) as never[];

export class VllmEngine<R extends EngineRequest = EngineRequest> implements TrackedEngine<R> {
  readonly #cfg: VllmEngineConfig;
  readonly #role: EngineRole;
  readonly #reportTokens: boolean;
  readonly #histograms: boolean;
  readonly #kv: BlockPool;
  /** The held requests by id, with `indexIds` (else null). */
  readonly #byId: Map<string, Seq<R>> | null;
  /** Requests accepted so far: the order of the held ones, for `restart`. */
  #acceptedCount = 0;
  readonly #waiting = new Deque<Seq<R>>();
  /** RUNNING; its planned prefix is the batch in flight (while `#inFlightEndMs` is not NaN). */
  readonly #running = new RunningBatch<R>(new StepLog(() => this.#oldestFirstToken()));
  /** The last scheduling pass's shape, admissions and preemptions, reused by every step. */
  readonly #plan = new BatchPlan<R>();
  /** Output tokens a request brings from upstream (1 on a decode-role engine). */
  readonly #generatedBefore: number;
  /** When the batch in flight ends, ms; NaN when none is in flight. */
  #inFlightEndMs = Number.NaN;
  /**
   * Duration of the batch in flight, µs (an integer; 0 before the first): set by `step()` and,
   * for a batch planned ahead, by `catchUp`, so both modes agree once caught up.
   */
  #inFlightUs = 0;
  /**
   * KV blocks in use as of the last step. `kv_cache_usage_perc` is this over the pool, divided
   * when read (scrapes, the time series) rather than at every step.
   */
  #kvUsedAtStep = 0;
  /** Batches completed so far, and when the last one completed (ms). */
  #completions = 0;
  #lastCompletionMs = Number.NaN;
  /** When a step is due with no batch in flight, ms; NaN when none is (a number, never null, so the field stays unboxed). */
  #readyAtMs = Number.NaN;
  #startedAtMs: number;
  #metrics: EngineMetricsRecorder;
  // What the step being completed emitted; NONE until something is added.
  #tokens: R[] = NONE;
  #firstTokens: R[] = NONE;
  #finished: FinishedRequest<R>[] = NONE;
  /**
   * With `reuseOutcome`, the objects every step refills: the outcome, its batch, its lists of
   * first tokens and finished requests, and the finished entries (a pool that only grows).
   */
  readonly #reused: {
    outcome: Mutable<StepOutcome<R>>;
    batch: Mutable<BatchInfo>;
    accepted: Accepted;
    firstTokens: R[];
    finished: Mutable<FinishedRequest<R>>[];
    finishedPool: Mutable<FinishedRequest<R>>[];
  } | null;
  /** The planned run of uneventful steps, with `runAhead`. */
  readonly #ahead: RunAhead | null;
  /** {@link VllmEngine.#stepDurationUs} for a start in µs, bound once (planning runs after most passes). */
  readonly #durationUs = (shape: BatchShape, startUs: number, offset: number): number =>
    this.#stepDurationUs(
      shape,
      this.#cfg.coldStart === undefined ? 0 : startUs / US_PER_MS,
      this.#ordinal + offset,
    );
  /** Ordinal of the batch formed last (the one in flight): batches formed since construction, minus 1. */
  #ordinal = -1;

  constructor(config: VllmEngineConfig) {
    const l = config.limits;
    if (l.maxNumBatchedTokens < l.maxNumSeqs) {
      throw new RangeError(
        `max_num_batched_tokens (${l.maxNumBatchedTokens}) must be >= max_num_seqs (${l.maxNumSeqs})`,
      );
    }
    for (const [name, v] of [
      ['max_model_len', l.maxModelLen],
      ['max_num_batched_tokens', l.maxNumBatchedTokens],
      ['num_gpu_blocks', l.numGpuBlocks],
    ] as const) {
      if (v > MAX_TOKEN_COUNT) {
        throw new RangeError(
          `${name} (${v}) must be <= ${MAX_TOKEN_COUNT}: the running batch keeps token and block counts as int32`,
        );
      }
    }
    this.#cfg = config;
    this.#role = config.role ?? 'unified';
    this.#generatedBefore = this.#role === 'decode' ? 1 : 0;
    this.#reportTokens = config.reportTokens ?? true;
    this.#histograms = config.histograms ?? true;
    this.#reused = config.reuseOutcome
      ? {
          outcome: emptyOutcome<R>(),
          batch: emptyBatchInfo(),
          accepted: { accepted: true, progress: { emittedTokens: 0 } },
          firstTokens: [],
          finished: [],
          finishedPool: [],
        }
      : null;
    if (config.runAhead && (this.#reportTokens || this.#histograms)) {
      throw new RangeError('runAhead needs reportTokens and histograms off');
    }
    this.#ahead = config.runAhead === true ? new RunAhead() : null;
    this.#kv = new BlockPool(l.numGpuBlocks);
    this.#byId = config.indexIds === false ? null : new Map();
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

  /**
   * Output tokens streamed per ms now: the running sequences over the duration of the step
   * in flight; 0 when none is (the frontend's load, `frontend.ts`). With `runAhead`, read it
   * after `catchUp` to now (`SimEngineHost.sync`), as every other reading of the state.
   */
  get streamRatePerMs(): number {
    if (Number.isNaN(this.#inFlightEndMs) || this.#inFlightUs === 0) return 0;
    return (this.#running.length * US_PER_MS) / this.#inFlightUs;
  }

  get kvCacheUsage(): number {
    return this.#kvUsedAtStep / this.#kv.totalBlocks;
  }

  submit(request: R, nowMs: number): SubmitResult {
    const { promptTokens: p, outputTokens: o } = request;
    const minOutput = this.#role === 'decode' ? 2 : 1;
    if (!Number.isInteger(p) || !Number.isInteger(o) || p < 1 || o < minOutput) {
      return { accepted: false, reason: 'invalid' };
    }
    const l = this.#cfg.limits;
    const tooLong = p + o > l.maxModelLen || blocksFor(p + o, l.blockSize) > l.numGpuBlocks;
    const kvArrives = this.#role === 'decode';
    const seq = new Seq<R>(
      this.#running,
      request,
      this.#histograms ? new SeqTimes(request.arrivalMs ?? nowMs) : null,
      kvArrives ? p + 1 : p,
      kvArrives ? p : 0,
      this.#generatedBefore,
      this.#role === 'prefill' ? 1 : o,
    );
    const byId = this.#byId;
    if (byId !== null) {
      // One map operation on the common path: the id is new exactly when the map grows.
      const held = byId.size;
      byId.set(request.id, seq);
      if (byId.size === held) {
        byId.set(request.id, this.#search(request.id) as Seq<R>);
        return { accepted: false, reason: 'duplicate_id' };
      }
      if (tooLong) byId.delete(request.id);
    }
    if (tooLong) return { accepted: false, reason: 'too_long' };
    seq.order = this.#acceptedCount++;
    this.#waiting.pushBack(seq);
    this.#ahead?.drop();
    if (Number.isNaN(this.#inFlightEndMs) && Number.isNaN(this.#readyAtMs)) this.#readyAtMs = nowMs;
    const accepted = this.#reused?.accepted ?? ({ accepted: true } as Accepted);
    accepted.progress = seq;
    return accepted;
  }

  /** The held sequence of request `id`, found by a search of RUNNING then WAITING. */
  #search(id: string): Seq<R> | undefined {
    const b = this.#running;
    for (let i = 0; i < b.length; i++) {
      const seq = b.seqs[i] as Seq<R>;
      if (seq.request.id === id) return seq;
    }
    const w = this.#waiting;
    for (let i = 0; i < w.length; i++) {
      const seq = w.at(i) as Seq<R>;
      if (seq.request.id === id) return seq;
    }
    return undefined;
  }

  /** The held sequence of request `id`. */
  #held(id: string): Seq<R> | undefined {
    return this.#byId === null ? this.#search(id) : this.#byId.get(id);
  }

  abort(id: string, _nowMs: number): R | undefined {
    const seq = this.#held(id);
    if (seq === undefined) return undefined;
    this.#ahead?.drop();
    if (seq.running) this.#running.removeAt(this.#running.indexOf(seq));
    else this.#waiting.remove(seq);
    this.#kv.release(seq.numBlocks);
    seq.numBlocks = 0;
    seq.gone = true;
    this.#byId?.delete(id);
    const m = this.#metrics;
    m.requestSuccess.abort++;
    m.abortedGeneratedTokens += seq.emittedTokens;
    m.abortedComputedTokens += seq.computeSpent;
    return seq.request;
  }

  progress(id: string): RequestProgress | undefined {
    return this.#held(id);
  }

  nextStepAt(): number | null {
    if (!Number.isNaN(this.#inFlightEndMs)) return this.#ahead?.lastEndMs() ?? this.#inFlightEndMs;
    if (this.#running.length + this.#waiting.length === 0) return null;
    return Number.isNaN(this.#readyAtMs) ? null : this.#readyAtMs;
  }

  catchUp(nowMs: number, inclusive: boolean): number {
    const ahead = this.#ahead;
    if (ahead === null) return 0;
    const n = ahead.due(nowMs, inclusive);
    if (n === 0) return 0;
    const b = this.#running;
    const used = b.advanceDecodes(n, this.#cfg.limits.blockSize, this.#completions);
    if (!this.#kv.tryAllocate(used)) throw new Error('internal: a planned step ran out of KV blocks');
    const log = b.log;
    const applied = ahead.applied();
    for (let k = applied - n; k < applied; k++) log.record(ahead.endUs(k));
    const m = this.#metrics;
    this.#ordinal += n;
    m.engineSteps += n;
    m.generationTokens += n * b.length;
    this.#kvUsedAtStep = this.#kv.usedBlocks;
    this.#completions += n;
    this.#lastCompletionMs = ahead.lastAppliedStartMs();
    this.#inFlightEndMs = ahead.inFlightEndMs();
    this.#inFlightUs = ahead.endUs(applied) - ahead.endUs(applied - 1);
    return n;
  }

  dropRunAhead(): void {
    this.#ahead?.drop();
  }

  step(nowMs: number): StepOutcome<R> {
    if (this.#ahead !== null) {
      if (this.#ahead.pending() > 0)
        throw new Error('internal: step() before the planned steps were caught up');
      this.#ahead.drop();
    }
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

    const running = this.#running;
    const plan = this.#plan;
    scheduleBatch(running, this.#waiting, this.#kv, this.#cfg.limits, plan);
    const m = this.#metrics;
    const preempted = plan.preempted;
    for (const seq of preempted) {
      seq.preemptions++;
      m.numPreemptions++;
    }
    if (this.#histograms) {
      for (let i = plan.admittedFrom; i < running.planned; i++) {
        const t = (running.seqs[i] as Seq<R>).times as SeqTimes;
        if (Number.isNaN(t.firstScheduledMs)) t.firstScheduledMs = nowMs;
      }
    }
    let batch: BatchInfo | null = null;
    if (running.planned > 0) {
      const durationUs = this.#stepDurationUs(plan.shape, nowMs, ++this.#ordinal);
      const durationMs = durationUs / US_PER_MS;
      this.#inFlightEndMs = nowMs + durationMs;
      this.#inFlightUs = durationUs;
      this.#readyAtMs = Number.NaN;
      m.engineSteps++;
      batch = this.#batchInfo(nowMs, durationMs);
      if (this.#ahead !== null && preempted.length === 0 && plan.admittedFrom === running.planned) {
        this.#planAhead(nowMs, durationUs);
      }
    } else {
      // Nothing fit. After a preemption the next pass can admit (vLLM skips admission in a
      // pass that preempted), so retry at once; otherwise wait for a submit or abort.
      this.#readyAtMs = preempted.length > 0 ? nowMs : Number.NaN;
    }
    m.running = this.#running.length;
    m.waiting = this.#waiting.length;
    this.#kvUsedAtStep = this.#kv.usedBlocks;
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
    this.#ahead?.drop();
    const held = [
      ...this.#running.seqs.slice(0, this.#running.length),
      ...this.#waiting.toArray(),
    ] as Seq<R>[];
    this.#running.clear();
    // In the order they were submitted, as the index lists them.
    const lost = held
      .sort((a, b) => a.order - b.order)
      .map((s) => {
        s.gone = true;
        return s.request;
      });
    this.#byId?.clear();
    this.#waiting.clear();
    this.#inFlightEndMs = Number.NaN;
    this.#readyAtMs = Number.NaN;
    this.#kv.reset();
    this.#metrics = this.#metrics.fresh();
    this.#kvUsedAtStep = 0;
    this.#startedAtMs = nowMs;
    return lost;
  }

  metrics(): EngineMetricsSnapshot {
    this.#metrics.kvCacheUsage = this.kvCacheUsage;
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
    const running: SeqInspection[] = [];
    const b = this.#running;
    for (let i = 0; i < b.length; i++) {
      running.push({
        id: (b.seqs[i] as Seq<R>).request.id,
        numComputedTokens: b.computed[i] as number,
        generatedTokens: b.generated[i] as number,
        numBlocks: b.blocks[i] as number,
        preemptions: (b.seqs[i] as Seq<R>).preemptions,
      });
    }
    return {
      running,
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
    const b = this.#running;
    b.log.record(Math.round(nowMs * US_PER_MS));
    const { seqs, newTokens, computed, numTokens, generated, finishAt, lastTokenStep, lastTokenMs } = b;
    const count = b.planned;
    const firstAt = this.#generatedBefore + 1;
    const m = this.#metrics;
    const itl = m.itl;
    const histograms = this.#histograms;
    let emitted = 0;
    let anyFinished = false;
    let gapMs = Number.NaN;
    let gapCount = 0;
    for (let i = 0; i < count; i++) {
      const n = newTokens[i] as number;
      const c = (computed[i] as number) + n;
      computed[i] = c;
      if (c < (numTokens[i] as number)) continue;
      const g = (generated[i] as number) + 1;
      generated[i] = g;
      numTokens[i] = (numTokens[i] as number) + 1;
      emitted++;
      if (this.#reportTokens) this.#addToken((seqs[i] as Seq<R>).request);
      if (g === firstAt) {
        this.#firstToken(seqs[i] as Seq<R>, nowMs, completion);
      } else {
        const last = lastTokenStep[i] as number;
        if (last !== completion - 1) (seqs[i] as Seq<R>).addBreak(last, completion);
        if (histograms) {
          const gap = nowMs - (last === completion - 1 ? previousMs : (lastTokenMs[i] as number));
          if (gap !== gapMs) {
            if (gapCount > 0) itl.observeMany(gapMs / 1000, gapCount);
            gapMs = gap;
            gapCount = 0;
          }
          gapCount++;
        }
      }
      lastTokenStep[i] = completion;
      if (histograms) lastTokenMs[i] = nowMs;
      if (g >= (finishAt[i] as number)) {
        this.#finish(i);
        anyFinished = true;
      }
    }
    if (gapCount > 0) itl.observeMany(gapMs / 1000, gapCount);
    m.generationTokens += emitted;
    if (anyFinished) b.dropFinished();
  }

  #addToken(request: R): void {
    if (this.#tokens === NONE) this.#tokens = [];
    this.#tokens.push(request);
  }

  #firstToken(seq: Seq<R>, nowMs: number, completion: number): void {
    seq.firstTokenStep = completion;
    const m = this.#metrics;
    if (this.#firstTokens === NONE) this.#firstTokens = this.#freshList(this.#reused?.firstTokens);
    this.#firstTokens.push(seq.request);
    m.promptTokens += seq.request.promptTokens;
    if (this.#histograms) {
      const t = seq.times as SeqTimes;
      t.firstTokenMs = nowMs;
      m.ttft.observe((nowMs - t.arrivalMs) / 1000);
    }
  }

  /**
   * The oldest completion a held request may still read from the step log: the earliest first
   * token among the held requests that have one (Infinity when none has).
   */
  #oldestFirstToken(): number {
    let oldest = Number.POSITIVE_INFINITY;
    const b = this.#running;
    for (let i = 0; i < b.length; i++) {
      const f = (b.seqs[i] as Seq<R>).firstTokenStep;
      if (f >= 0 && f < oldest) oldest = f;
    }
    const w = this.#waiting;
    for (let i = 0; i < w.length; i++) {
      const f = (w.at(i) as Seq<R>).firstTokenStep;
      if (f >= 0 && f < oldest) oldest = f;
    }
    return oldest;
  }

  /** Retires RUNNING entry `i`, which emitted its last token; it leaves RUNNING in `dropFinished`. */
  #finish(i: number): void {
    const b = this.#running;
    // The histograms read the request's timestamps; otherwise only its output count matters now.
    const seq = this.#histograms ? b.writeBack(i) : b.retire(i);
    const reason = this.#role === 'prefill' ? 'length' : (seq.request.finishReason ?? 'stop');
    seq.gone = true;
    this.#kv.release(b.blocks[i] as number);
    seq.numBlocks = 0;
    this.#byId?.delete(seq.request.id);
    if (this.#histograms) {
      this.#metrics.recordFinished(
        reason,
        seq.times as SeqTimes,
        seq.request.promptTokens,
        seq.emittedTokens,
      );
    } else {
      this.#metrics.requestSuccess[reason]++;
    }
    const r = this.#reused;
    if (r === null) {
      if (this.#finished === NONE) this.#finished = [];
      this.#finished.push({ request: seq.request, reason, emittedTokens: seq.emittedTokens });
      return;
    }
    if (this.#finished === NONE) this.#finished = this.#freshList(r.finished);
    const k = this.#finished.length;
    let entry = r.finishedPool[k];
    if (entry === undefined) {
      entry = { request: seq.request, reason, emittedTokens: 0 };
      r.finishedPool.push(entry);
    }
    entry.request = seq.request;
    entry.reason = reason;
    entry.emittedTokens = seq.emittedTokens;
    r.finished.push(entry);
  }

  /** The reused `list` emptied, or a new list without `reuseOutcome`. */
  #freshList<T>(list: T[] | undefined): T[] {
    if (list === undefined) return [];
    // Pops, not `length = 0`: the list holds a request or two, and the length setter is a
    // call into the runtime on every step while a pop is inlined.
    while (list.length > 0) list.pop();
    return list;
  }

  /**
   * After a pass that formed a batch of decodes only, with no admission and no preemption:
   * plans the steps that follow it while nothing in them can happen that a host sees.
   */
  #planAhead(nowMs: number, durationUs: number): void {
    const b = this.#running;
    const shape = this.#plan.shape;
    if (b.planned !== b.length || shape.numDecodeSeqs !== b.length) return;
    (this.#ahead as RunAhead).plan(
      b,
      this.#generatedBefore + 1,
      this.#cfg.limits.blockSize,
      this.#kv.freeBlocks,
      shape.contextTokens,
      Math.round(nowMs * US_PER_MS) + durationUs,
      this.#durationUs,
    );
  }

  /** Duration in whole µs (at least 1) of batch number `ordinal`, a `shape` starting at `nowMs`. */
  #stepDurationUs(shape: BatchShape, nowMs: number, ordinal: number): number {
    let ms = this.#cfg.stepTime(shape) * coldStartMultiplier(this.#cfg.coldStart, nowMs - this.#startedAtMs);
    const jitter = this.#cfg.jitter;
    if (jitter !== undefined && jitter.sigma > 0) ms *= jitter.factor(ordinal);
    return Math.max(1, Math.round(ms * US_PER_MS));
  }
}
