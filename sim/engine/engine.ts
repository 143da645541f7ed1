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
import { scheduleStep } from './scheduler.js';
import type { ColdStart, StepTimeModel } from './step-time.js';
import { coldStartMultiplier } from './step-time.js';
import type {
  Engine,
  EngineRequest,
  EngineRole,
  FinishedRequest,
  StepOutcome,
  SubmitResult,
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

interface Seq<R extends EngineRequest> extends SchedSeq {
  readonly request: R;
  readonly arrivalMs: number;
  /** Output tokens so far, including any made upstream. */
  generated: number;
  /** Output tokens emitted by this engine. */
  emitted: number;
  /** Tokens computed for this request on this engine, recomputation included. */
  computeSpent: number;
  preemptions: number;
  firstScheduledMs: number;
  firstTokenMs: number;
  lastTokenMs: number;
  /** Set when the request leaves the engine (finish or abort) while a batch may hold it. */
  gone: boolean;
}

interface InFlight<R extends EngineRequest> {
  readonly endMs: number;
  readonly seqs: Seq<R>[];
  readonly newTokens: number[];
}

/** Host calls may be this much early (ms) against `nextStepAt()`, to absorb rounding. */
const EARLY_TOLERANCE_MS = 1e-6;

export class VllmEngine<R extends EngineRequest = EngineRequest> implements Engine<R> {
  readonly #cfg: VllmEngineConfig;
  readonly #role: EngineRole;
  readonly #kv: BlockPool;
  readonly #byId = new Map<string, Seq<R>>();
  readonly #waiting = new Deque<Seq<R>>();
  #running: Seq<R>[] = [];
  #inFlight: InFlight<R> | null = null;
  #readyAtMs: number | null = null;
  #startedAtMs: number;
  #metrics: EngineMetricsRecorder;

  constructor(config: VllmEngineConfig) {
    const l = config.limits;
    if (l.maxNumBatchedTokens < l.maxNumSeqs) {
      throw new RangeError(
        `max_num_batched_tokens (${l.maxNumBatchedTokens}) must be >= max_num_seqs (${l.maxNumSeqs})`,
      );
    }
    this.#cfg = config;
    this.#role = config.role ?? 'unified';
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
      request,
      arrivalMs: request.arrivalMs ?? nowMs,
      numTokens: kvArrives ? p + 1 : p,
      numComputedTokens: kvArrives ? p : 0,
      numBlocks: 0,
      generated: kvArrives ? 1 : 0,
      emitted: 0,
      computeSpent: 0,
      preemptions: 0,
      firstScheduledMs: Number.NaN,
      firstTokenMs: Number.NaN,
      lastTokenMs: Number.NaN,
      gone: false,
    };
    this.#byId.set(request.id, seq);
    this.#waiting.pushBack(seq);
    if (this.#inFlight === null && this.#readyAtMs === null) this.#readyAtMs = nowMs;
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
    m.abortedGeneratedTokens += seq.emitted;
    m.abortedComputedTokens += seq.computeSpent;
    return seq.request;
  }

  nextStepAt(): number | null {
    if (this.#inFlight !== null) return this.#inFlight.endMs;
    if (this.#byId.size === 0) return null;
    return this.#readyAtMs;
  }

  step(nowMs: number): StepOutcome<R> {
    const tokens: R[] = [];
    const firstTokens: R[] = [];
    const finished: FinishedRequest<R>[] = [];
    const inFlight = this.#inFlight;
    if (inFlight !== null) {
      if (nowMs < inFlight.endMs - EARLY_TOLERANCE_MS) {
        throw new RangeError(`step(${nowMs}) called before the batch ends at ${inFlight.endMs} ms`);
      }
      this.#complete(inFlight, nowMs, tokens, firstTokens, finished);
      this.#inFlight = null;
    }

    const plan = scheduleStep(this.#running, this.#waiting, this.#kv, this.#cfg.limits);
    const m = this.#metrics;
    for (const seq of plan.preempted) {
      seq.preemptions++;
      m.numPreemptions++;
    }
    for (const seq of plan.admitted) {
      if (Number.isNaN(seq.firstScheduledMs)) seq.firstScheduledMs = nowMs;
    }
    let batch: StepOutcome<R>['batch'] = null;
    if (plan.seqs.length > 0) {
      const durationMs = this.#stepDurationMs(plan.shape, nowMs);
      this.#inFlight = { endMs: nowMs + durationMs, seqs: plan.seqs, newTokens: plan.newTokens };
      this.#readyAtMs = null;
      m.engineSteps++;
      batch = {
        startMs: nowMs,
        durationMs,
        numSeqs: plan.shape.numSeqs,
        numTokens: plan.shape.numTokens,
        numPrefillTokens: plan.shape.numPrefillTokens,
      };
    } else {
      // Nothing fit. After a preemption the next pass can admit (vLLM skips admission in a
      // pass that preempted), so retry at once; otherwise wait for a submit or abort.
      this.#readyAtMs = plan.preempted.length > 0 ? nowMs : null;
    }
    m.running = this.#running.length;
    m.waiting = this.#waiting.length;
    m.kvCacheUsage = this.#kv.usage();
    return {
      atMs: nowMs,
      tokens,
      firstTokens,
      finished,
      preempted: plan.preempted.map((s) => s.request),
      batch,
    };
  }

  restart(nowMs: number): R[] {
    const lost = [...this.#byId.values()].map((s) => {
      s.gone = true;
      return s.request;
    });
    this.#byId.clear();
    this.#waiting.clear();
    this.#running = [];
    this.#inFlight = null;
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

  #complete(
    batch: InFlight<R>,
    nowMs: number,
    tokens: R[],
    firstTokens: R[],
    finished: FinishedRequest<R>[],
  ): void {
    const m = this.#metrics;
    let anyFinished = false;
    for (let i = 0; i < batch.seqs.length; i++) {
      const seq = batch.seqs[i] as Seq<R>;
      if (seq.gone) continue;
      const n = batch.newTokens[i] as number;
      seq.numComputedTokens += n;
      seq.computeSpent += n;
      if (seq.numComputedTokens < seq.numTokens) continue;
      seq.generated++;
      seq.numTokens++;
      seq.emitted++;
      m.generationTokens++;
      tokens.push(seq.request);
      if (seq.emitted === 1) {
        seq.firstTokenMs = nowMs;
        firstTokens.push(seq.request);
        m.promptTokens += seq.request.promptTokens;
        m.ttft.observe((nowMs - seq.arrivalMs) / 1000);
      } else {
        m.itl.observe((nowMs - seq.lastTokenMs) / 1000);
      }
      seq.lastTokenMs = nowMs;
      const done = this.#role === 'prefill' || seq.generated >= seq.request.outputTokens;
      if (!done) continue;
      const reason = this.#role === 'prefill' ? 'length' : (seq.request.finishReason ?? 'stop');
      seq.gone = true;
      anyFinished = true;
      this.#kv.release(seq.numBlocks);
      seq.numBlocks = 0;
      this.#byId.delete(seq.request.id);
      m.recordFinished(reason, seq, seq.request.promptTokens, seq.emitted);
      finished.push({ request: seq.request, reason, emittedTokens: seq.emitted });
    }
    if (anyFinished) this.#running = this.#running.filter((s) => !s.gone);
  }

  #stepDurationMs(shape: Parameters<StepTimeModel>[0], nowMs: number): number {
    let ms = this.#cfg.stepTime(shape) * coldStartMultiplier(this.#cfg.coldStart, nowMs - this.#startedAtMs);
    const jitter = this.#cfg.jitter;
    if (jitter !== undefined && jitter.sigma > 0) ms *= jitter.rng.lognormal(0, jitter.sigma);
    return Math.max(1, Math.round(ms * 1000)) / 1000;
  }
}
