/**
 * An engine that replays recorded timings: each request sends its first
 * token `ttftMs` after it is submitted and finishes `serviceMs` after it,
 * however many run at once (the timings already carry the real engines'
 * load). For replays of a gateway's decision log, where each request that
 * ran has its service time and TTFT on record. A request without a record
 * (one the gateway refused) takes the mean of the recorded ones seen so far.
 */
import { EngineMetricsRecorder, type EngineMetricsSnapshot } from './metrics.js';
import type {
  EngineRequest,
  FinishedRequest,
  RequestProgress,
  StepOutcome,
  SubmitResult,
  TrackedEngine,
} from './types.js';

/** A request with the timing a gateway recorded for it. */
export interface RecordedEngineRequest extends EngineRequest {
  /** Submit → end, ms. */
  readonly serviceMs?: number;
  /** Submit → first token, ms (at most serviceMs). */
  readonly ttftMs?: number;
}

export interface RecordedEngineConfig {
  readonly modelName: string;
  /** @default '0' */
  readonly engineIndex?: string;
  /** Service time of a request with no record before any was seen, ms. @default 1000 */
  readonly defaultServiceMs?: number;
}

interface Job<R extends RecordedEngineRequest> extends RequestProgress {
  readonly request: R;
  readonly submitMs: number;
  readonly firstMs: number;
  readonly endMs: number;
  emittedTokens: number;
  gone: boolean;
}

/** A due time in the heap: the first token (0) or the end (1) of a job. */
interface Due<R extends RecordedEngineRequest> {
  at: number;
  seq: number;
  kind: 0 | 1;
  job: Job<R>;
}

export class RecordedEngine<R extends RecordedEngineRequest = RecordedEngineRequest>
  implements TrackedEngine<R>
{
  readonly #cfg: RecordedEngineConfig;
  readonly #byId = new Map<string, Job<R>>();
  readonly #heap: Due<R>[] = [];
  #seq = 0;
  #serviceSum = 0;
  #ttftSum = 0;
  #recorded = 0;
  #metrics: EngineMetricsRecorder;

  constructor(config: RecordedEngineConfig) {
    this.#cfg = config;
    this.#metrics = new EngineMetricsRecorder(
      config.modelName,
      config.engineIndex ?? '0',
      { blockSize: 16, numGpuBlocks: 0, gpuMemoryUtilization: 0 },
      1_000_000,
    );
  }

  get numRunning(): number {
    return this.#byId.size;
  }

  get numWaiting(): number {
    return 0;
  }

  get kvCacheUsage(): number {
    return 0;
  }

  progress(id: string): RequestProgress | undefined {
    return this.#byId.get(id);
  }

  submit(request: R, nowMs: number): SubmitResult {
    if (this.#byId.has(request.id)) return { accepted: false, reason: 'duplicate_id' };
    let service = request.serviceMs;
    let ttft = request.ttftMs;
    if (service !== undefined && Number.isFinite(service) && service >= 0) {
      this.#serviceSum += service;
      this.#ttftSum += Math.min(ttft ?? service, service);
      this.#recorded++;
    } else {
      const n = this.#recorded;
      service = n === 0 ? (this.#cfg.defaultServiceMs ?? 1000) : this.#serviceSum / n;
      ttft = n === 0 ? undefined : this.#ttftSum / n;
    }
    const first = Math.min(ttft ?? service, service);
    // Due times on whole microseconds, the resolution of the simulator's clock.
    const job: Job<R> = {
      request,
      submitMs: nowMs,
      firstMs: toMicros(nowMs + first),
      endMs: toMicros(nowMs + service),
      emittedTokens: 0,
      gone: false,
    };
    this.#byId.set(request.id, job);
    this.#push({ at: job.firstMs, seq: this.#seq++, kind: 0, job });
    this.#push({ at: job.endMs, seq: this.#seq++, kind: 1, job });
    this.#metrics.running = this.#byId.size;
    return { accepted: true };
  }

  abort(id: string, _nowMs: number): R | undefined {
    const job = this.#byId.get(id);
    if (job === undefined) return undefined;
    job.gone = true;
    this.#byId.delete(id);
    this.#metrics.requestSuccess.abort++;
    this.#metrics.running = this.#byId.size;
    return job.request;
  }

  nextStepAt(): number | null {
    while (this.#heap.length > 0 && this.#heap[0]!.job.gone) this.#pop();
    return this.#heap.length === 0 ? null : this.#heap[0]!.at;
  }

  step(nowMs: number): StepOutcome<R> {
    const first: R[] = [];
    const finished: FinishedRequest<R>[] = [];
    const m = this.#metrics;
    while (this.#heap.length > 0 && this.#heap[0]!.at <= nowMs + EARLY_TOLERANCE_MS) {
      const d = this.#pop();
      const job = d.job;
      if (job.gone) continue;
      const out = job.request.outputTokens;
      if (d.kind === 0) {
        job.emittedTokens = 1;
        first.push(job.request);
        m.ttft.observe((nowMs - job.submitMs) / 1000);
        continue;
      }
      job.gone = true;
      job.emittedTokens = out;
      this.#byId.delete(job.request.id);
      const reason = job.request.finishReason ?? 'stop';
      finished.push({ request: job.request, reason, emittedTokens: out });
      m.generationTokens += out;
      m.promptTokens += job.request.promptTokens;
      m.recordFinished(
        reason,
        {
          arrivalMs: job.submitMs,
          firstScheduledMs: job.submitMs,
          firstTokenMs: job.firstMs,
          lastTokenMs: nowMs,
        },
        job.request.promptTokens,
        out,
      );
    }
    m.running = this.#byId.size;
    m.engineSteps++;
    return { atMs: nowMs, tokens: first, firstTokens: first, finished, preempted: [], batch: null };
  }

  restart(_nowMs: number): R[] {
    const lost = [...this.#byId.values()].map((j) => {
      j.gone = true;
      return j.request;
    });
    this.#byId.clear();
    this.#heap.length = 0;
    this.#metrics = this.#metrics.fresh();
    return lost;
  }

  metrics(): EngineMetricsSnapshot {
    return this.#metrics.snapshot();
  }

  #push(d: Due<R>): void {
    const h = this.#heap;
    h.push(d);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!earlier(h[i]!, h[p]!)) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  #pop(): Due<R> {
    const h = this.#heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && earlier(h[l]!, h[m]!)) m = l;
        if (r < h.length && earlier(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** Host calls may be this much early (ms) against `nextStepAt()`, to absorb rounding. */
const EARLY_TOLERANCE_MS = 1e-6;

function toMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function earlier<R extends RecordedEngineRequest>(a: Due<R>, b: Due<R>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
