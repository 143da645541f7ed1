/**
 * One request's life in the proxy: arrival, credential, body, the gate's
 * decision, the wait, the backend leg, the end. Its `life` (exchange-life.ts)
 * decides when it is over; the unit it holds is released exactly once, and
 * exactly one decision-log record is written.
 */
import type { GrantOutcome, Permit, Refusal, Ticket } from '../gate/index.js';
import type { Target } from './backend-pools.js';
import type { DecisionRecord, LogDecision, RequestOutcome } from './decision-log.js';
import { ExchangeLife, type LifeHooks } from './exchange-life.js';
import type { Abortable } from './forward.js';
import type { AnyRequest, AnyResponse } from './listener.js';

/** Who runs an exchange once the gate hands it a turn or ends its wait. */
export interface ExchangeOwner {
  granted(ex: Exchange, ticket: Ticket, permit: Permit): GrantOutcome;
  ended(ex: Exchange, ticket: Ticket, refusal: Refusal): void;
  /** The exchange left the gate's queue (its client went away). */
  cancelWait(ex: Exchange, ticket: Ticket): void;
  /** The exchange is over (`gone`: its client left before the answer was written). */
  over(ex: Exchange, gone: boolean): void;
}

export class Exchange implements LifeHooks {
  readonly life = new ExchangeLife(this);
  owner: ExchangeOwner | null = null;
  /** How the exchange ends when its response finishes (null: completed). */
  outcome: RequestOutcome | null = null;
  /** Wall-clock arrival time, ms since the epoch (the log's `time`). */
  readonly wallMs = Date.now();
  /** Held unit, once admitted (null for bypassed requests). */
  permit: Permit | null = null;
  ticket: Ticket | null = null;
  /** The request body, when it was read before the decision. */
  body: Buffer | null = null;
  bodyBuffered = true;
  inference = false;
  tenant: string | undefined;
  decision: LogDecision = 'admit';
  reason = '';
  error: string | null = null;
  endpoint: string | null = null;
  queuedMs: number | null = null;
  ttftMs: number | null = null;
  promptTokens: number | null = null;
  outputTokens: number | null = null;
  /** The backend leg while it runs (cut when the client goes away). */
  backend: Abortable | null = null;
  /** Verified credential claims (JWT claims; `sub` for an API key), when the credential named a tenant. */
  claims: Readonly<Record<string, unknown>> | undefined;
  /** Headers the proxy sets on the backend request, flat `[name, value, ...]` (lower-case), replacing the client's. */
  backendHeaders: string[] | null = null;
  /**
   * A request the policy degraded to a fallback pool: the pool's name and the endpoint of its rule
   * to use (null when none was usable at dispatch); null otherwise.
   */
  policyPool: { pool: string; to: { service: string; target: Target } | null } | null = null;
  /** The policy's decision-log object (`--policy`), or null. */
  policyLog: Record<string, unknown> | null = null;
  #logged = false;

  /**
   * @param arrivedMs monotonic arrival time (ms), the start of duration_ms
   * @param service the service label of the log
   */
  constructor(
    readonly req: AnyRequest,
    readonly res: AnyResponse,
    readonly protocol: 'http1' | 'h2',
    readonly service: string,
    readonly arrivedMs: number,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get path(): string {
    return this.req.url ?? '/';
  }

  /** The exchange is over (answered, or its client left): nothing more is written or started. */
  get gone(): boolean {
    return this.life.over;
  }

  /**
   * Takes a unit (an admit or a waiter's turn).
   * @returns false when the exchange was already over: the unit went back at once
   */
  take(permit: Permit): boolean {
    const prev = this.permit;
    this.permit = permit;
    if (this.life.took()) return true;
    this.permit = prev;
    return false;
  }

  /** Releases the held unit early; idempotent (the life releases it at the end otherwise). */
  release(): void {
    this.life.release();
  }

  /** Called by the life, once per unit taken (`take` restores the previous permit after a refused one). */
  releaseUnit(): void {
    this.permit?.release();
  }

  cancelWait(): void {
    if (this.ticket !== null) this.owner?.cancelWait(this, this.ticket);
  }

  abortLeg(): void {
    this.backend?.abort();
  }

  over(gone: boolean): void {
    this.owner?.over(this, gone);
  }

  /**
   * Ends the exchange's bookkeeping: builds its log record once.
   * @returns the record the first time, null afterwards
   */
  finish(outcome: RequestOutcome, status: number, nowMs: number): DecisionRecord | null {
    if (this.#logged) return null;
    this.#logged = true;
    return {
      time: isoTime(this.wallMs),
      service: this.service,
      tenant: this.tenant ?? null,
      decision: this.decision,
      reason: this.reason,
      outcome,
      status,
      error: this.error,
      method: this.method,
      path: this.path,
      protocol: this.protocol,
      endpoint: this.endpoint,
      queued_ms: this.queuedMs === null ? null : round(this.queuedMs),
      ttft_ms: this.ttftMs === null ? null : round(this.ttftMs),
      duration_ms: round(nowMs - this.arrivedMs),
      prompt_tokens: this.promptTokens,
      output_tokens: this.outputTokens,
      // Only with --policy: the envelope, each field's source and the disposition.
      ...(this.policyLog === null ? {} : { policy: this.policyLog }),
    } as DecisionRecord;
  }
}

let lastMs = Number.NaN;
let lastIso = '';

/** ISO 8601 time of `ms` (epoch ms); the last one is reused, as many requests share a millisecond. */
function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
