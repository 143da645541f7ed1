/**
 * Runs an {@link Engine} on the real clock: one timer, set for the earlier of the engine's
 * `nextStepAt()` and the next request leaving the frontend delay; each firing steps the engine
 * and hands the step's tokens and completions to the requests' sinks.
 *
 * A StepOutcome is only valid until the next `step` call (engines may reuse it), so the host
 * copies what it needs out of it before doing anything else.
 */
import type { Engine, EngineRequest, SubmitRejection } from '../../sim/engine/types.js';
import type { ScaledClock } from './clock.js';

/** Where the host delivers a request's progress. */
export interface RequestSink {
  /** One output token was emitted (called once per token, in order). */
  token(): void;
  /** The request completed after `emittedTokens` tokens. */
  finish(reason: 'stop' | 'length', emittedTokens: number): void;
  /** The engine refused the request after the frontend delay. */
  reject(reason: SubmitRejection): void;
}

/** A request as the emulator submits it: it carries its own sink. */
export interface HostedRequest extends EngineRequest {
  readonly sink: RequestSink;
}

/** Counters of a host since it started. */
export interface HostStats {
  /** Requests handed to `submit`. */
  readonly submitted: number;
  /** Requests that completed. */
  readonly finished: number;
  /** Requests aborted (while in the frontend delay or in the engine). */
  readonly aborted: number;
  /** Requests the engine refused. */
  readonly rejected: number;
  /** Tokens delivered to sinks. */
  readonly tokens: number;
  /** `step` calls. */
  readonly steps: number;
  /** Sum over steps of how late the host called them, engine ms (event-loop and timer lag). */
  readonly lagMsTotal: number;
  /** The latest any step was called, engine ms. Large values: the host cannot keep up. */
  readonly lagMsMax: number;
}

interface Pending<R> {
  readonly request: R;
  readonly dueMs: number;
}

/** A step this close ahead (real ms) runs now rather than after another timer turn. */
const EARLY_FIRE_REAL_MS = 0.25;

/** Steps run back to back in one timer firing at most (a guard against a spinning engine). */
const MAX_STEPS_PER_FIRING = 10_000;

export class RealClockEngineHost<R extends HostedRequest> {
  readonly engine: Engine<R>;
  readonly clock: ScaledClock;
  /** Frontend delay before a request reaches the engine, engine ms. */
  readonly apiOverheadMs: number;
  /** Requests in the frontend delay, in submit order (so in due order). */
  #pending: Pending<R>[] = [];
  #timer: NodeJS.Timeout | null = null;
  #timerAtMs = Number.NaN;
  #closed = false;
  #stats = {
    submitted: 0,
    finished: 0,
    aborted: 0,
    rejected: 0,
    tokens: 0,
    steps: 0,
    lagMsTotal: 0,
    lagMsMax: 0,
  };

  /** The delay of a request submitted now, engine ms (the idle delay unless under load). */
  readonly #delayMs: () => number;

  /**
   * @param apiOverheadMs the idle frontend delay, engine ms
   * @param delayMs the delay of a request submitted now, engine ms, when it depends on the
   *   engine's load (`sim/engine/frontend.ts`); default: always `apiOverheadMs`
   */
  constructor(engine: Engine<R>, clock: ScaledClock, apiOverheadMs = 0, delayMs?: () => number) {
    this.engine = engine;
    this.clock = clock;
    this.apiOverheadMs = apiOverheadMs;
    this.#delayMs = delayMs ?? (() => apiOverheadMs);
  }

  /**
   * Submits a request now; it reaches the engine after the frontend delay. An engine refusal
   * is returned at once when there is no delay, otherwise delivered to `sink.reject`.
   * @returns the refusal reason, or null when accepted or pending
   */
  submit(request: R): SubmitRejection | null {
    if (this.#closed) return 'invalid';
    this.#stats.submitted++;
    const now = this.clock.now();
    if (this.apiOverheadMs > 0) {
      // Kept in due order: a load-dependent delay can let a later request overtake.
      const dueMs = now + this.#delayMs();
      const p = this.#pending;
      let at = p.length;
      while (at > 0 && (p[at - 1] as Pending<R>).dueMs > dueMs) at--;
      p.splice(at, 0, { request: { ...request, arrivalMs: now }, dueMs });
      this.#reschedule();
      return null;
    }
    const result = this.engine.submit(request, now);
    this.#reschedule();
    if (result.accepted) return null;
    this.#stats.rejected++;
    return result.reason;
  }

  /** Cancels a request (client gone). @returns true if the host still held it */
  abort(id: string): boolean {
    const at = this.#pending.findIndex((p) => p.request.id === id);
    if (at >= 0) {
      this.#pending.splice(at, 1);
      this.#stats.aborted++;
      this.#reschedule();
      return true;
    }
    const gone = this.engine.abort(id, this.clock.now()) !== undefined;
    if (gone) this.#stats.aborted++;
    this.#reschedule();
    return gone;
  }

  /** Counters so far. */
  stats(): HostStats {
    return { ...this.#stats };
  }

  /** Stops the timer and drops every request (the engine restarts empty). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending = [];
    this.engine.restart(this.clock.now());
  }

  #nextAt(): number | null {
    const step = this.engine.nextStepAt();
    const head = this.#pending[0];
    if (head === undefined) return step;
    return step === null ? head.dueMs : Math.min(step, head.dueMs);
  }

  #reschedule(): void {
    if (this.#closed) return;
    const at = this.#nextAt();
    if (at === this.#timerAtMs && this.#timer !== null) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAtMs = Number.NaN;
    if (at === null) return;
    this.#timerAtMs = at;
    this.#timer = setTimeout(this.#fire, this.clock.realDelayUntil(at));
  }

  readonly #fire = (): void => {
    this.#timer = null;
    this.#timerAtMs = Number.NaN;
    const tokens: R[] = [];
    const finished: { request: R; reason: 'stop' | 'length'; emitted: number }[] = [];
    const rejected: { request: R; reason: SubmitRejection }[] = [];
    const now = this.clock.now();
    this.#admitPending(now, rejected);
    for (let i = 0; i < MAX_STEPS_PER_FIRING; i++) {
      const at = this.engine.nextStepAt();
      if (at === null || at > now + EARLY_FIRE_REAL_MS * this.clock.timeScale) break;
      const outcome = this.engine.step(Math.max(now, at));
      const lag = Math.max(0, now - at);
      this.#stats.steps++;
      this.#stats.lagMsTotal += lag;
      if (lag > this.#stats.lagMsMax) this.#stats.lagMsMax = lag;
      // Copy at once: the outcome is only valid until the next step call.
      for (const r of outcome.tokens) tokens.push(r);
      for (const f of outcome.finished) {
        finished.push({ request: f.request, reason: f.reason, emitted: f.emittedTokens });
      }
    }
    this.#reschedule();
    this.#stats.tokens += tokens.length;
    this.#stats.finished += finished.length;
    this.#stats.rejected += rejected.length;
    for (const r of tokens) r.sink.token();
    for (const f of finished) f.request.sink.finish(f.reason, f.emitted);
    for (const x of rejected) x.request.sink.reject(x.reason);
  };

  #admitPending(now: number, rejected: { request: R; reason: SubmitRejection }[]): void {
    let n = 0;
    while (n < this.#pending.length && (this.#pending[n] as Pending<R>).dueMs <= now) {
      const { request, dueMs } = this.#pending[n] as Pending<R>;
      const result = this.engine.submit(request, dueMs);
      if (!result.accepted) rejected.push({ request, reason: result.reason });
      n++;
    }
    if (n > 0) this.#pending.splice(0, n);
  }
}
