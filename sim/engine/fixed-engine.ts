/**
 * The `fixed` engine: constant time to first token and inter-token time, at most
 * `maxConcurrency` requests generating at once, and a FIFO queue beyond that. No batching
 * effects, no KV cache: for tests that need exact, load-independent timings.
 *
 * It implements the same {@link Engine} port as the vLLM model, so the real-clock host drives
 * it the same way. A request admitted at time s emits token k (1-based) at
 * s + ttft + (k − 1)·itl, both scaled by `slowdown()` as read when the token is scheduled.
 * Token times follow that schedule even when the host steps late (late tokens catch up, one
 * per step call). The running and waiting gauges move on submit and abort too, not only on steps.
 */
import { Deque } from './deque.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { EngineMetricsRecorder } from './metrics.js';
import type { Engine, EngineRequest, FinishedRequest, StepOutcome, SubmitResult } from './types.js';

/** Configuration of a {@link FixedEngine}. */
export interface FixedEngineConfig {
  readonly modelName: string;
  /** Admission to first token, ms (≥ 0). */
  readonly ttftMs: number;
  /** Between successive tokens of one request, ms (≥ 0). */
  readonly itlMs: number;
  /** Requests generating at once (≥ 1); the rest wait in FIFO order. */
  readonly maxConcurrency: number;
  /** Longest prompt + output accepted, tokens. */
  readonly maxModelLen: number;
  /** Current slowdown factor (multiplies ttft and itl). @default () => 1 */
  readonly slowdown?: () => number;
}

interface Job<R extends EngineRequest> {
  readonly request: R;
  readonly arrivalMs: number;
  startMs: number;
  nextAtMs: number;
  emitted: number;
  firstTokenMs: number;
  lastTokenMs: number;
}

/** Host calls may be this much early (ms) against `nextStepAt()`. */
const EARLY_TOLERANCE_MS = 1e-6;

export class FixedEngine<R extends EngineRequest = EngineRequest> implements Engine<R> {
  readonly #cfg: FixedEngineConfig;
  readonly #waiting = new Deque<Job<R>>();
  #running: Job<R>[] = [];
  readonly #byId = new Map<string, Job<R>>();
  #readyAtMs: number | null = null;
  #metrics: EngineMetricsRecorder;

  constructor(config: FixedEngineConfig) {
    if (!Number.isInteger(config.maxConcurrency) || config.maxConcurrency < 1) {
      throw new RangeError(`max concurrency: ${config.maxConcurrency} is not an integer >= 1`);
    }
    if (!(config.ttftMs >= 0) || !(config.itlMs >= 0)) {
      throw new RangeError(`ttft/itl: ${config.ttftMs}/${config.itlMs} ms must be >= 0`);
    }
    this.#cfg = config;
    this.#metrics = this.#newRecorder();
  }

  get numRunning(): number {
    return this.#running.length;
  }

  get numWaiting(): number {
    return this.#waiting.length;
  }

  submit(request: R, nowMs: number): SubmitResult {
    const { promptTokens: p, outputTokens: o } = request;
    if (!Number.isInteger(p) || !Number.isInteger(o) || p < 1 || o < 1) {
      return { accepted: false, reason: 'invalid' };
    }
    if (this.#byId.has(request.id)) return { accepted: false, reason: 'duplicate_id' };
    if (p + o > this.#cfg.maxModelLen) return { accepted: false, reason: 'too_long' };
    const job: Job<R> = {
      request,
      arrivalMs: request.arrivalMs ?? nowMs,
      startMs: Number.NaN,
      nextAtMs: Number.NaN,
      emitted: 0,
      firstTokenMs: Number.NaN,
      lastTokenMs: Number.NaN,
    };
    this.#byId.set(request.id, job);
    this.#waiting.pushBack(job);
    if (this.#running.length < this.#cfg.maxConcurrency && this.#readyAtMs === null) this.#readyAtMs = nowMs;
    this.#setGauges();
    return { accepted: true };
  }

  abort(id: string, nowMs: number): R | undefined {
    const job = this.#byId.get(id);
    if (job === undefined) return undefined;
    this.#byId.delete(id);
    const at = this.#running.indexOf(job);
    if (at >= 0) {
      this.#running.splice(at, 1);
      if (this.#waiting.length > 0 && this.#readyAtMs === null) this.#readyAtMs = nowMs;
    } else {
      this.#waiting.remove(job);
    }
    const m = this.#metrics;
    m.requestSuccess.abort++;
    m.abortedGeneratedTokens += job.emitted;
    this.#setGauges();
    return job.request;
  }

  nextStepAt(): number | null {
    let next = this.#readyAtMs ?? Number.POSITIVE_INFINITY;
    for (const job of this.#running) if (job.nextAtMs < next) next = job.nextAtMs;
    return next === Number.POSITIVE_INFINITY ? null : next;
  }

  step(nowMs: number): StepOutcome<R> {
    const tokens: R[] = [];
    const firstTokens: R[] = [];
    const finished: FinishedRequest<R>[] = [];
    const m = this.#metrics;
    const slow = this.#slowdown();
    let anyFinished = false;
    for (const job of this.#running) {
      if (job.nextAtMs > nowMs + EARLY_TOLERANCE_MS) continue;
      job.emitted++;
      m.generationTokens++;
      tokens.push(job.request);
      if (job.emitted === 1) {
        job.firstTokenMs = nowMs;
        firstTokens.push(job.request);
        m.promptTokens += job.request.promptTokens;
        m.ttft.observe((nowMs - job.arrivalMs) / 1000);
      } else {
        m.itl.observe((nowMs - job.lastTokenMs) / 1000);
      }
      job.lastTokenMs = nowMs;
      if (job.emitted < job.request.outputTokens) {
        job.nextAtMs += this.#cfg.itlMs * slow;
        continue;
      }
      const reason = job.request.finishReason ?? 'stop';
      anyFinished = true;
      job.nextAtMs = Number.POSITIVE_INFINITY;
      this.#byId.delete(job.request.id);
      m.recordFinished(
        reason,
        {
          arrivalMs: job.arrivalMs,
          firstScheduledMs: job.startMs,
          firstTokenMs: job.firstTokenMs,
          lastTokenMs: nowMs,
        },
        job.request.promptTokens,
        job.emitted,
      );
      finished.push({ request: job.request, reason, emittedTokens: job.emitted });
    }
    if (anyFinished) this.#running = this.#running.filter((j) => j.nextAtMs !== Number.POSITIVE_INFINITY);
    while (this.#running.length < this.#cfg.maxConcurrency && this.#waiting.length > 0) {
      const job = this.#waiting.popFront() as Job<R>;
      job.startMs = nowMs;
      job.nextAtMs = nowMs + this.#cfg.ttftMs * slow;
      this.#running.push(job);
    }
    this.#readyAtMs = null;
    this.#setGauges();
    m.engineSteps++;
    return { atMs: nowMs, tokens, firstTokens, finished, preempted: [], batch: null };
  }

  restart(_nowMs: number): R[] {
    const lost = [...this.#byId.values()].map((j) => j.request);
    this.#byId.clear();
    this.#waiting.clear();
    this.#running = [];
    this.#readyAtMs = null;
    this.#metrics = this.#newRecorder();
    return lost;
  }

  metrics(): EngineMetricsSnapshot {
    return this.#metrics.snapshot();
  }

  /** Unlike vLLM's, these gauges also move on submit and abort: this engine has no step cadence. */
  #setGauges(): void {
    this.#metrics.running = this.#running.length;
    this.#metrics.waiting = this.#waiting.length;
  }

  #slowdown(): number {
    return this.#cfg.slowdown?.() ?? 1;
  }

  #newRecorder(): EngineMetricsRecorder {
    return new EngineMetricsRecorder(
      this.#cfg.modelName,
      '0',
      { blockSize: 16, numGpuBlocks: 0, gpuMemoryUtilization: 0 },
      this.#cfg.maxModelLen,
    );
  }
}
