/**
 * One gated model pool: the façade the gate and its hosts hold. It keeps the
 * pool's state (configuration, endpoints, queue, tenants, units in use, the
 * ceilings in force) and hands each job to its own file:
 *
 * - pool-admission.ts: the decision on one request (admit, park, refuse);
 * - pool-queue.ts: parking, the deadline timer, and handing turns to waiters
 *   at release time (no wake-and-race; see its header);
 * - pool-ceilings.ts: per-endpoint ceilings with warm-up, the service
 *   ceiling, and the adaptive ceiling's state;
 * - pool-permits.ts: giving units back, and P/D legs;
 * - pool-telemetry.ts: decision counts, queue-wait histogram, Retry-After mean;
 * - pool-refusal.ts: a refusal with the pool's counts on its headers.
 */

import { type AdaptReason, type AdaptState, recordTtft } from './adaptive.js';
import type { TokenBucket } from './bucket.js';
import type { Clock } from './clock.js';
import type { ResolvedConfig } from './config.js';
import type { AdmissionHeaderValues, Ceiling, Refusal } from './decisions.js';
import { EndpointPicker } from './endpoint-ring.js';
import type { EndpointRole, EndpointState } from './endpoints.js';
import type { Leg, Permit, PermitOwner } from './permit.js';
import { Admission } from './pool-admission.js';
import {
  capOf,
  reconfigureCeilings,
  resetAdaptState,
  roleCap,
  stepAdaptive,
  warmingEndpoints,
} from './pool-ceilings.js';
import { closeLeg, giveBack, moveLeg, openLeg } from './pool-permits.js';
import { QueueService } from './pool-queue.js';
import { type ObserveCounts, PoolTelemetry } from './pool-telemetry.js';
import { type Waiter, WaitQueue } from './queue.js';
import { TenantTable } from './tenants.js';

export { type ObserveCounts, QUEUE_WAIT_BUCKETS_MS, RETRY_MEAN_WAITS } from './pool-telemetry.js';

/** What a host says when handed a waiter's turn. */
export type GrantOutcome = 'taken' | 'lost' | 'gone';

/** A waiting request, as the host holds it. */
export interface Ticket {
  /** The host's value given at admission. */
  readonly context: unknown;
  /** When it was parked (ms). */
  readonly enqueuedAtMs: number;
  /** When its wait window ends (ms). */
  readonly deadlineMs: number;
}

/** Callbacks through which a pool reaches the host for waiting requests. */
export interface GateHost {
  /** A waiter's turn: `permit` is already held for it. */
  granted(ticket: Ticket, permit: Permit): GrantOutcome;
  /** A waiter ended without a unit: queue timeout or drain. */
  ended(ticket: Ticket, refusal: Refusal): void;
}

/** A request presented to the gate. */
export interface AdmissionRequest {
  /** False for non-inference paths (model listing, health probes): they bypass. @default true */
  inference?: boolean;
  /** HTTP/1.1 requests may wait; HTTP/2 streams never do. @default 'http1' */
  protocol?: 'http1' | 'h2';
  /** Whether the body was fully read before the decision (decides keep-alive on a 429). @default true */
  bodyBuffered?: boolean;
  /** Tenant id the credential resolved to; absent for keyless traffic (one tenant). */
  tenant?: string;
  /** A P/D request: it takes a service unit here and opens prefill/decode legs later. @default false */
  pd?: boolean;
  /** Endpoint the balancer prefers (`IP:port`); another with room is used when it is full. */
  preferredEndpoint?: string;
}

/** What enforce would have done to a request admitted in observe mode. */
export interface ObserveNote {
  outcome: 'observe_would_shed' | 'observe_would_queue';
  /** Each ceiling that would have refused it. */
  ceilings: Ceiling[];
}

export type Decision =
  | { kind: 'admit'; permit: Permit; observe: ObserveNote | null }
  | { kind: 'queued'; ticket: Ticket }
  | { kind: 'refuse'; refusal: Refusal }
  | { kind: 'bypass'; endpoint: string | null; counted: boolean };

/** Process-wide anomaly counters shared by a gate's pools. */
export interface Anomalies {
  underflow: number;
  unknown_permit: number;
  tenant_table_full: number;
}

export interface PoolOptions {
  clock: Clock;
  host: GateHost;
  anomalies: Anomalies;
  /** Whether the gateway is in maintenance (read on each admission). */
  draining: () => boolean;
  /** SMG dialect: every request may wait, whatever its protocol. @default false */
  everyRequestMayWait?: boolean;
  /** SMG dialect: workers are chosen outside the gate, so no request takes an endpoint unit here. @default false */
  workersOutsideGate?: boolean;
}

export class Pool implements PermitOwner {
  cfg: ResolvedConfig;
  readonly endpoints: EndpointState[];
  /** The endpoint picks over `endpoints` (see endpoint-ring.ts). */
  readonly picker: EndpointPicker;
  readonly queue = new WaitQueue();
  readonly tenants = new TenantTable();
  /** Executing requests holding a service unit. */
  inflight = 0;
  /** The service ceiling in force (adaptive while adapting; 0 = none). */
  effective: number;
  adaptState: AdaptState = 'off';
  adaptReason: AdaptReason = 'none';
  adaptMovesDown = 0;
  adaptMovesUp = 0;
  /** Decisions by reason, indexed by `REASON_INDEX`. */
  readonly decisions: number[];
  readonly observeCounts: ObserveCounts;
  /** Admitted waiters' waits by `QUEUE_WAIT_BUCKETS_MS` (one overflow bucket). */
  readonly queueWaitBuckets: number[];
  /** False once the pool was deleted or re-created (see {@link retire}): its waiters are gone, its permits still release. */
  live = true;
  /** SMG dialect: the token bucket that replaces the service ceiling (null for the loxilb gate). */
  bucket: TokenBucket | null = null;

  readonly #o: PoolOptions;
  readonly #t = new PoolTelemetry();
  readonly #queue: QueueService;
  readonly #admission: Admission;

  constructor(cfg: ResolvedConfig, endpoints: EndpointState[], o: PoolOptions) {
    this.cfg = cfg;
    this.endpoints = endpoints;
    this.picker = new EndpointPicker(endpoints);
    this.effective = cfg.maxOutstanding;
    this.decisions = this.#t.decisions;
    this.observeCounts = this.#t.observeCounts;
    this.queueWaitBuckets = this.#t.queueWaitBuckets;
    this.#o = o;
    resetAdaptState(this);
    this.#queue = new QueueService(this, o, this.#t);
    this.#admission = new Admission(this, o, this.#t, this.#queue);
  }

  /** Ends the pool's life: its waiters end admission_drained, its deadline timer stops; permits still release. */
  retire(): void {
    this.drainWaiters();
    this.live = false;
    this.#queue.stop();
  }

  get mode(): ResolvedConfig['mode'] {
    return this.cfg.mode;
  }

  /** Sum of admitted waiters' waits, ms. */
  get queueWaitSumMs(): number {
    return this.#t.queueWaitSumMs;
  }

  /** Admitted waiters counted in the wait histogram. */
  get queueWaitCount(): number {
    return this.#t.queueWaitCount;
  }

  /** True while a tenant share is in force (it needs a service ceiling). */
  get shareActive(): boolean {
    return this.cfg.tenantMaxSharePct > 0 && this.cfg.maxOutstanding > 0;
  }

  /** Units one tenant may execute: a share of the ceiling in force, rounded up, at least 1. */
  get tenantExecBound(): number {
    return this.shareActive
      ? Math.max(1, Math.ceil((this.effective * this.cfg.tenantMaxSharePct) / 100))
      : Number.POSITIVE_INFINITY;
  }

  /** Requests one tenant may have waiting: a share of the depth, rounded up, at least 1 (0 with no depth). */
  get tenantQueueBound(): number {
    if (!this.shareActive) return Number.POSITIVE_INFINITY;
    return this.cfg.queueDepth === 0
      ? 0
      : Math.max(1, Math.ceil((this.cfg.queueDepth * this.cfg.tenantMaxSharePct) / 100));
  }

  /** The role ceiling configured for endpoints of `role`. */
  roleCap(role: EndpointRole): number {
    return roleCap(this.cfg, role);
  }

  /** The ceiling in force on `ep` right now (warm-up included). */
  capOf(ep: EndpointState, nowMs = this.#o.clock.now()): number {
    return capOf(this.cfg, ep, nowMs);
  }

  /** Endpoints inside their warm-up window. */
  warmingEndpoints(nowMs = this.#o.clock.now()): number {
    return warmingEndpoints(this, nowMs);
  }

  /**
   * The mean wait behind a full queue's or a timeout's Retry-After, in ms: over the last
   * `RETRY_MEAN_WAITS` requests to leave the queue admitted or timed out (cancelled and
   * drained waits say nothing of how long a turn takes). NaN when nobody has left yet.
   */
  get meanQueueWaitMs(): number {
    return this.#t.meanQueueWaitMs;
  }

  // ---- admission and waiting requests (pool-admission.ts, pool-queue.ts) ----

  /** Decides one request. */
  admit(req: AdmissionRequest, context?: unknown): Decision {
    return this.#admission.admit(req, context);
  }

  /** Ends a waiting request whose client has gone. No-op unless it is still waiting. */
  cancel(ticket: Ticket): void {
    this.#queue.cancel(ticket as Waiter);
  }

  /** True when some waiter could take a free unit right now (the sweep leaves none such behind). */
  hasRunnableWaiter(): boolean {
    return this.cfg.mode === 'enforce' && this.#queue.nextRunnable(this.#o.clock.now()) !== null;
  }

  /**
   * Hands free units to waiters, oldest eligible first, one per free unit.
   * Re-entrant calls (a host releasing inside `granted`) are folded into the
   * running pass.
   */
  dispatch(): void {
    this.#queue.dispatch();
  }

  /** Ends every waiter past its window with admission_queue_timeout (the sweep's backstop). */
  expireWaiters(): void {
    this.#queue.expireWaiters();
  }

  /** Ends every waiter with admission_drained, oldest first, waking none. */
  drainWaiters(): void {
    this.#queue.drainWaiters();
  }

  /** Admits every waiter at once, over any ceiling: the pool no longer enforces. */
  wakeAll(): void {
    this.#queue.wakeAll();
  }

  // ---- permits (pool-permits.ts) -------------------------------------------

  releasePermit(p: Permit): void {
    p.released = true;
    if (p.admitCountPending) {
      p.admitCountPending = false;
      this.#t.count('admitted');
    }
    if (!p.tracked) return;
    giveBack(this, this.#o, p);
    this.#queue.dispatch();
  }

  countUnknownPermit(): void {
    this.#o.anomalies.unknown_permit++;
  }

  firstDataEvent(p: Permit): void {
    if (!this.cfg.adaptive || this.cfg.ttftTargetMs <= 0) return;
    let ep = p.endpoint;
    if (p.legs !== null) {
      const decode = p.legs.find((l) => l.role === 'decode');
      if (decode) ep = decode.endpoint;
    }
    if (ep === null) return;
    const now = this.#o.clock.now();
    recordTtft(ep, now - p.admittedAtMs, now, this.cfg.telemetryStaleMs);
  }

  exposeHeaders(_p: Permit): AdmissionHeaderValues | null {
    if (!this.cfg.exposeHeaders || this.cfg.mode === 'off') return null;
    return { inflight: this.inflight, queued: this.queue.length, limit: this.effective };
  }

  openLeg(p: Permit, role: 'prefill' | 'decode', preferred: string | undefined): Leg | Refusal {
    return openLeg(this, this.#o, this.#t, p, role, preferred);
  }

  closeLeg(leg: Leg): void {
    closeLeg(this.#o, leg);
  }

  moveLeg(leg: Leg, to: string): boolean {
    return moveLeg(this, this.#o, leg, to);
  }

  // ---- the once-a-second work, reconfigure, health (pool-ceilings.ts) -----

  /** The sweep: expire waiters, step the adaptive ceiling, then wake heads where a unit is free. */
  tick(): void {
    if (!this.live) return;
    this.expireWaiters();
    this.adapt();
    if (this.cfg.mode !== 'enforce') this.wakeAll();
    else this.dispatch();
  }

  /** One adaptive step (called once a second). */
  adapt(): void {
    stepAdaptive(this, this.#o.clock.now());
  }

  /** Applies an in-place change of admission fields, then wakes whom it lets through. */
  reconfigure(next: ResolvedConfig): void {
    const prev = this.cfg;
    this.cfg = next;
    reconfigureCeilings(this, prev);
    if (next.mode !== 'enforce' && this.queue.length > 0) this.wakeAll();
    else this.dispatch();
  }

  /** Records an engine's scraped queue depth (`vllm:num_requests_waiting`) at the current time. */
  reportEngine(endpointId: string, numRequestsWaiting: number): boolean {
    const ep = this.endpoints.find((e) => e.id === endpointId);
    if (ep === undefined) return false;
    ep.waiting = numRequestsWaiting;
    ep.waitingAtMs = this.#o.clock.now();
    return true;
  }

  /** Marks an endpoint in or out of service; a return starts its warm-up and wakes waiters. */
  setEndpointHealth(endpointId: string, healthy: boolean): boolean {
    const ep = this.endpoints.find((e) => e.id === endpointId);
    if (ep === undefined) return false;
    if (ep.healthy === healthy) return true;
    ep.healthy = healthy;
    if (healthy) {
      if (this.cfg.warmupMs > 0) ep.warmStartMs = this.#o.clock.now();
      this.dispatch();
    }
    return true;
  }
}
