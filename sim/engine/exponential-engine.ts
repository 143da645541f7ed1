/**
 * An M/M/c-style engine for analytic checks: `servers` parallel servers (vLLM's
 * `max_num_seqs`), FIFO waiting line, and an exponential service time per request with the
 * given mean, drawn from the stream passed in and rounded to whole microseconds (at least 1 µs). There is no token-level detail: a request's
 * only token event is its completion, where it appears in `tokens`, `firstTokens` and
 * `finished` at once, so TTFT equals e2e latency. KV usage is always 0.
 */
import type { Rng } from '../kernel/rng.js';
import { Deque } from './deque.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { EngineMetricsRecorder } from './metrics.js';
import type {
  EngineRequest,
  FinishedRequest,
  RequestProgress,
  StepOutcome,
  SubmitResult,
  TrackedEngine,
} from './types.js';

/** Configuration of an {@link ExponentialServerEngine}. */
export interface ExponentialEngineConfig {
  readonly modelName: string;
  /** @default '0' */
  readonly engineIndex?: string;
  /** Parallel servers c (≥ 1). */
  readonly servers: number;
  /** Mean service time, ms. */
  readonly meanServiceMs: number;
  /** Stream for service times. */
  readonly rng: Rng;
}

/** Host calls may be this much early (ms) against `nextStepAt()`, to absorb rounding. */
const EARLY_TOLERANCE_MS = 1e-6;

interface Job<R extends EngineRequest> extends RequestProgress {
  readonly request: R;
  readonly arrivalMs: number;
  startMs: number;
  endMs: number;
  /** 1 once the job has completed (its only appearance in `tokens`), else 0. */
  emittedTokens: number;
}

export class ExponentialServerEngine<R extends EngineRequest = EngineRequest> implements TrackedEngine<R> {
  readonly #cfg: ExponentialEngineConfig;
  readonly #waiting = new Deque<Job<R>>();
  #inService: Job<R>[] = [];
  readonly #byId = new Map<string, Job<R>>();
  #readyAtMs: number | null = null;
  #metrics: EngineMetricsRecorder;

  constructor(config: ExponentialEngineConfig) {
    if (!Number.isInteger(config.servers) || config.servers < 1) {
      throw new RangeError(`Expected servers to be a positive integer, got ${config.servers}`);
    }
    if (!(config.meanServiceMs > 0)) {
      throw new RangeError(`Expected meanServiceMs > 0, got ${config.meanServiceMs}`);
    }
    this.#cfg = config;
    this.#metrics = new EngineMetricsRecorder(
      config.modelName,
      config.engineIndex ?? '0',
      { blockSize: 16, numGpuBlocks: 0, gpuMemoryUtilization: 0 },
      1_000_000,
    );
  }

  get numRunning(): number {
    return this.#inService.length;
  }

  get numWaiting(): number {
    return this.#waiting.length;
  }

  get kvCacheUsage(): number {
    return this.#metrics.kvCacheUsage;
  }

  progress(id: string): RequestProgress | undefined {
    return this.#byId.get(id);
  }

  submit(request: R, nowMs: number): SubmitResult {
    if (this.#byId.has(request.id)) return { accepted: false, reason: 'duplicate_id' };
    const job: Job<R> = {
      request,
      arrivalMs: request.arrivalMs ?? nowMs,
      startMs: Number.NaN,
      endMs: Number.NaN,
      emittedTokens: 0,
    };
    this.#byId.set(request.id, job);
    this.#waiting.pushBack(job);
    if (this.#inService.length < this.#cfg.servers && this.#readyAtMs === null) this.#readyAtMs = nowMs;
    return { accepted: true };
  }

  abort(id: string, nowMs: number): R | undefined {
    const job = this.#byId.get(id);
    if (job === undefined) return undefined;
    this.#byId.delete(id);
    const at = this.#inService.indexOf(job);
    if (at >= 0) {
      this.#inService.splice(at, 1);
      if (this.#waiting.length > 0 && this.#readyAtMs === null) this.#readyAtMs = nowMs;
    } else {
      this.#waiting.remove(job);
    }
    this.#metrics.requestSuccess.abort++;
    return job.request;
  }

  nextStepAt(): number | null {
    let next = this.#readyAtMs ?? Number.POSITIVE_INFINITY;
    for (const job of this.#inService) if (job.endMs < next) next = job.endMs;
    return next === Number.POSITIVE_INFINITY ? null : next;
  }

  step(nowMs: number): StepOutcome<R> {
    const done: R[] = [];
    const finished: FinishedRequest<R>[] = [];
    const m = this.#metrics;
    const still: Job<R>[] = [];
    for (const job of this.#inService) {
      if (job.endMs > nowMs + EARLY_TOLERANCE_MS) {
        still.push(job);
        continue;
      }
      this.#byId.delete(job.request.id);
      job.emittedTokens = 1;
      done.push(job.request);
      const reason = job.request.finishReason ?? 'stop';
      finished.push({ request: job.request, reason, emittedTokens: job.request.outputTokens });
      m.generationTokens += job.request.outputTokens;
      m.promptTokens += job.request.promptTokens;
      m.ttft.observe((job.endMs - job.arrivalMs) / 1000);
      m.recordFinished(
        reason,
        {
          arrivalMs: job.arrivalMs,
          firstScheduledMs: job.startMs,
          firstTokenMs: job.endMs,
          lastTokenMs: job.endMs,
        },
        job.request.promptTokens,
        job.request.outputTokens,
      );
    }
    this.#inService = still;
    const rate = 1 / this.#cfg.meanServiceMs;
    while (this.#inService.length < this.#cfg.servers && this.#waiting.length > 0) {
      const job = this.#waiting.popFront() as Job<R>;
      job.startMs = nowMs;
      job.endMs = nowMs + Math.max(1, Math.round(this.#cfg.rng.exponential(rate) * 1000)) / 1000;
      this.#inService.push(job);
    }
    this.#readyAtMs = null;
    m.running = this.#inService.length;
    m.waiting = this.#waiting.length;
    m.engineSteps++;
    return { atMs: nowMs, tokens: done, firstTokens: done, finished, preempted: [], batch: null };
  }

  restart(_nowMs: number): R[] {
    const lost = [...this.#byId.values()].map((j) => j.request);
    this.#byId.clear();
    this.#waiting.clear();
    this.#inService = [];
    this.#readyAtMs = null;
    this.#metrics = this.#metrics.fresh();
    return lost;
  }

  metrics(): EngineMetricsSnapshot {
    return this.#metrics.snapshot();
  }
}
