/**
 * One gated model pool: its ceilings, queue, tenants, adaptive ceiling,
 * warm-up and counters.
 *
 * Turns are handed over at release time: a release picks the oldest eligible
 * waiter, takes the units for it and hands the host a ready permit, so a
 * newcomer can never barge in between (no wake-and-race). The host may answer
 * that the waiter could not take it now ('lost': the waiter returns to the
 * head by its first arrival, keeping its deadline, and the next release or
 * the once-a-second sweep retries) or that its client has gone ('gone': the
 * turn passes to the next waiter).
 */

import {
  type AdaptReason,
  type AdaptState,
  adaptStep,
  clampAdaptive,
  isAdapting,
  recordTtft,
} from './adaptive.js';
import type { TokenBucket } from './bucket.js';
import type { Clock, ClockTimer } from './clock.js';
import type { ResolvedConfig } from './config.js';
import {
  type AdmissionHeaderValues,
  type Ceiling,
  DECISION_REASONS,
  type DecisionReason,
  makeRefusal,
  REASON_INDEX,
  type Refusal,
} from './decisions.js';
import {
  type EndpointRole,
  type EndpointState,
  endpointCap,
  isWarming,
  PICK_ALL_FULL,
  PICK_NONE_HEALTHY,
  pickEndpoint,
  pickEndpointAt,
} from './endpoints.js';
import { Leg, Permit, type PermitOwner } from './permit.js';
import { WAITER_ENDED, WAITER_GRANTED, WAITER_QUEUED, Waiter, WaitQueue } from './queue.js';
import { type TenantSlot, TenantTable } from './tenants.js';

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

/** Waits (ms) the Retry-After mean covers: the last this many requests to leave the queue admitted or timed out. */
export const RETRY_MEAN_WAITS = 64;

/** Queue-wait histogram bucket bounds, in ms. */
export const QUEUE_WAIT_BUCKETS_MS = [10, 50, 100, 250, 500, 1000, 2500, 5000] as const;

/** Per-ceiling counts of observe-mode would-be refusals. */
export type ObserveCounts = Record<Exclude<Ceiling, 'none' | 'queue'>, { shed: number; queue: number }>;

const EMPTY_KEY = '';
/**
 * A deadline this close ahead counts as reached when the deadline timer fires (ms): the
 * simulator keeps whole microseconds, so a timer set at a fractional deadline may fire up
 * to half a microsecond before it.
 */
const DEADLINE_SLACK_MS = 0.001;
/** Waiters looked at from the head before the search falls back to each waiting tenant's oldest. */
const HEAD_SCAN = 16;

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
  readonly decisions = new Array<number>(DECISION_REASONS.length).fill(0);
  readonly observeCounts: ObserveCounts = {
    service: { shed: 0, queue: 0 },
    endpoint: { shed: 0, queue: 0 },
    tenant: { shed: 0, queue: 0 },
  };
  readonly queueWaitBuckets = new Array<number>(QUEUE_WAIT_BUCKETS_MS.length + 1).fill(0);
  queueWaitSumMs = 0;
  queueWaitCount = 0;
  /** The last {@link RETRY_MEAN_WAITS} waits that ended admitted or timed out (a ring), and their sum. */
  readonly #recentWaits = new Float64Array(RETRY_MEAN_WAITS);
  #recentNext = 0;
  #recentCount = 0;
  #recentSumMs = 0;
  /** False once the pool was deleted or re-created (see {@link retire}): its waiters are gone, its permits still release. */
  live = true;
  /** SMG dialect: the token bucket that replaces the service ceiling (null for the loxilb gate). */
  bucket: TokenBucket | null = null;

  readonly #o: PoolOptions;
  #seq = 0;
  #dispatching = false;
  #redispatch = false;
  /**
   * One timer for the pool's earliest queue deadline. Deadlines grow with arrival order
   * while the wait window stays the same, so the head's is the earliest; after a replace
   * shortened the window (or a woken loser returned out of order) `#deadlinesInOrder` is
   * false until the queue empties, and the earliest is found by a scan.
   */
  readonly #deadlineTimer: ClockTimer;
  /** When the deadline timer is set to fire (ms); +Infinity when it is not set. */
  #deadlineAtMs = Number.POSITIVE_INFINITY;
  #deadlinesInOrder = true;

  constructor(cfg: ResolvedConfig, endpoints: EndpointState[], o: PoolOptions) {
    this.cfg = cfg;
    this.endpoints = endpoints;
    this.effective = cfg.maxOutstanding;
    this.#o = o;
    this.#resetAdaptState();
    this.#deadlineTimer = o.clock.timer(() => this.#deadlineDue());
  }

  /** Ends the pool's life: its waiters end admission_drained, its deadline timer stops; permits still release. */
  retire(): void {
    this.drainWaiters();
    this.live = false;
    this.#deadlineTimer.clear();
    this.#deadlineAtMs = Number.POSITIVE_INFINITY;
  }

  get mode(): ResolvedConfig['mode'] {
    return this.cfg.mode;
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
    return role === 'normal'
      ? this.cfg.epMaxInflight
      : role === 'prefill'
        ? this.cfg.prefillMaxInflight
        : this.cfg.decodeMaxInflight;
  }

  /** The largest per-endpoint ceiling in force among healthy endpoints of `role` (warm-up included; 0 = none). */
  #roleCapInForce(role: EndpointRole): number {
    const now = this.#o.clock.now();
    let cap = 0;
    for (const ep of this.endpoints)
      if (ep.role === role && ep.healthy) cap = Math.max(cap, this.capOf(ep, now));
    return cap === 0 ? this.roleCap(role) : cap;
  }

  /** The ceiling in force on `ep` right now (warm-up included). */
  capOf(ep: EndpointState, nowMs = this.#o.clock.now()): number {
    return endpointCap(ep, this.roleCap(ep.role), this.cfg.warmupMs, nowMs);
  }

  /** Endpoints inside their warm-up window. */
  warmingEndpoints(nowMs = this.#o.clock.now()): number {
    let n = 0;
    for (const ep of this.endpoints)
      if (ep.healthy && this.roleCap(ep.role) > 0 && isWarming(ep, this.cfg.warmupMs, nowMs)) n++;
    return n;
  }

  /**
   * The mean wait behind a full queue's or a timeout's Retry-After, in ms: over the last
   * {@link RETRY_MEAN_WAITS} requests to leave the queue admitted or timed out (cancelled and
   * drained waits say nothing of how long a turn takes). NaN when nobody has left yet.
   */
  get meanQueueWaitMs(): number {
    return this.#recentCount === 0 ? Number.NaN : this.#recentSumMs / this.#recentCount;
  }

  #noteWait(ms: number): void {
    const i = this.#recentNext;
    if (this.#recentCount === RETRY_MEAN_WAITS) this.#recentSumMs -= this.#recentWaits[i]!;
    else this.#recentCount++;
    this.#recentWaits[i] = ms;
    this.#recentSumMs += ms;
    this.#recentNext = i + 1 === RETRY_MEAN_WAITS ? 0 : i + 1;
  }

  // ---- admission -------------------------------------------------------

  /** Decides one request. */
  admit(req: AdmissionRequest, context?: unknown): Decision {
    const mode = this.cfg.mode;
    if (req.inference === false) {
      if (mode !== 'off') this.#count('bypass_non_inference');
      return { kind: 'bypass', endpoint: this.#anyEndpoint(req.preferredEndpoint), counted: mode !== 'off' };
    }
    if (mode === 'off')
      return { kind: 'bypass', endpoint: this.#anyEndpoint(req.preferredEndpoint), counted: false };
    if (mode === 'observe') return this.#admitObserve(req, context);
    return this.#admitEnforce(req, context);
  }

  #admitEnforce(req: AdmissionRequest, context: unknown): Decision {
    const now = this.#o.clock.now();
    const bodyBuffered = req.bodyBuffered !== false;
    if (this.#o.draining()) return this.#refuse('draining', bodyBuffered, 'service');
    const outside = this.#o.workersOutsideGate === true;
    const pd = req.pd === true || outside;
    const share = this.shareActive;
    const slot = this.#slot(req.tenant, share);

    let ep: EndpointState | null = null;
    let epFull = false;
    if (pd) {
      if (!outside && !this.endpoints.some((e) => e.healthy && e.role !== 'normal')) {
        this.tenants.release(slot);
        return this.#refuse('no_healthy_capacity', bodyBuffered, 'endpoint');
      }
    } else {
      const picked = pickEndpointAt(
        this.endpoints,
        'normal',
        this.roleCap('normal'),
        this.cfg.warmupMs,
        now,
        req.preferredEndpoint,
      );
      if (picked === PICK_NONE_HEALTHY) {
        this.tenants.release(slot);
        return this.#refuse('no_healthy_capacity', bodyBuffered, 'endpoint');
      }
      if (picked === PICK_ALL_FULL) epFull = true;
      else ep = picked;
    }
    const svcFull = this.#serviceFull(now);
    const tenantFull = share && slot.exec >= this.tenantExecBound;
    const queueBlocks = this.queue.length > 0 && (!share || (!svcFull && this.#nextRunnable(now) !== null));

    if (!svcFull && !epFull && !tenantFull && !queueBlocks) {
      if (ep !== null) ep.inflight++;
      return {
        kind: 'admit',
        permit: this.#take(ep, slot, now, context, req.pd === true && !outside),
        observe: null,
      };
    }
    const ceiling: Ceiling = svcFull ? 'service' : epFull ? 'endpoint' : tenantFull ? 'tenant' : 'service';
    const mayWait =
      (req.protocol !== 'h2' || this.#o.everyRequestMayWait === true) && this.cfg.queueDepth > 0;
    if (mayWait) {
      if (this.queue.length >= this.cfg.queueDepth) {
        this.tenants.release(slot);
        return this.#refuse('queue_full', bodyBuffered, ceiling);
      }
      if (slot.queued >= this.tenantQueueBound) {
        this.tenants.release(slot);
        return this.#refuse('tenant_share', bodyBuffered, 'tenant', undefined, true);
      }
      const w = new Waiter(
        this.#seq++,
        now,
        now + this.cfg.queueWaitMs,
        slot,
        pd,
        bodyBuffered,
        req.preferredEndpoint,
        context,
        this,
      );
      this.#park(w);
      this.#count('queued');
      return { kind: 'queued', ticket: w };
    }
    this.tenants.release(slot);
    return this.#refuse(
      tenantFull ? 'tenant_share' : 'capacity_shed',
      bodyBuffered,
      tenantFull ? 'tenant' : ceiling,
    );
  }

  #admitObserve(req: AdmissionRequest, context: unknown): Decision {
    const now = this.#o.clock.now();
    const pd = req.pd === true || this.#o.workersOutsideGate === true;
    const slot = this.#slot(req.tenant, this.shareActive);
    const ceilings: Ceiling[] = [];
    if (this.effective > 0 && this.inflight >= this.effective) ceilings.push('service');
    let ep: EndpointState | null = null;
    // With no healthy endpoint enforce answers 503 at once: that would be a shed, never a wait.
    let noneHealthy = false;
    if (pd) {
      noneHealthy =
        this.#o.workersOutsideGate !== true && !this.endpoints.some((e) => e.healthy && e.role !== 'normal');
      if (noneHealthy) ceilings.push('endpoint');
    } else {
      const picked = pickEndpointAt(
        this.endpoints,
        'normal',
        this.roleCap('normal'),
        this.cfg.warmupMs,
        now,
        req.preferredEndpoint,
      );
      if (picked === PICK_NONE_HEALTHY || picked === PICK_ALL_FULL) {
        noneHealthy = picked === PICK_NONE_HEALTHY;
        ceilings.push('endpoint');
        const any = pickEndpoint(this.endpoints, 'normal', () => 0, req.preferredEndpoint, true);
        ep = typeof any === 'object' ? any : (this.endpoints.find((e) => e.role === 'normal') ?? null);
      } else ep = picked;
    }
    if (this.shareActive && slot.exec >= this.tenantExecBound) ceilings.push('tenant');
    let note: ObserveNote | null = null;
    if (ceilings.length > 0) {
      const wouldQueue =
        !noneHealthy &&
        (req.protocol !== 'h2' || this.#o.everyRequestMayWait === true) &&
        this.cfg.queueDepth > 0;
      const outcome = wouldQueue ? 'observe_would_queue' : 'observe_would_shed';
      for (const c of ceilings) {
        this.#count(outcome);
        const oc = this.observeCounts[c as keyof ObserveCounts];
        if (wouldQueue) oc.queue++;
        else oc.shed++;
      }
      note = { outcome, ceilings };
    }
    if (ep !== null) ep.inflight++;
    return { kind: 'admit', permit: this.#take(ep, slot, now, context, false), observe: note };
  }

  /** Takes the service and tenant units (the endpoint unit is taken by the caller) and counts the admission. */
  /** @param legsDecide a P/D request under enforce: its legs decide how it is counted (see `Permit.admitCountPending`) */
  #take(
    ep: EndpointState | null,
    slot: TenantSlot,
    now: number,
    context: unknown,
    legsDecide: boolean,
  ): Permit {
    this.inflight++;
    this.bucket?.take();
    slot.exec++;
    const p = new Permit(this, true, ep, slot, now, context);
    if (legsDecide) p.admitCountPending = true;
    else this.#count('admitted');
    return p;
  }

  /** True when no service unit is free: the ceiling in force is reached, or the SMG bucket is empty. */
  #serviceFull(now: number): boolean {
    if (this.bucket !== null) return !this.bucket.available(now);
    return this.effective > 0 && this.inflight >= this.effective;
  }

  #slot(tenant: string | undefined, share: boolean): TenantSlot {
    const slot = this.tenants.slotFor(tenant ?? EMPTY_KEY);
    if (slot.overflow && share) this.#o.anomalies.tenant_table_full++;
    return slot;
  }

  #anyEndpoint(preferred: string | undefined): string | null {
    const picked = pickEndpoint(this.endpoints, 'normal', () => 0, preferred, true);
    return typeof picked === 'object' ? picked.id : null;
  }

  #refuse(
    reason: DecisionReason,
    bodyBuffered: boolean,
    ceiling: Ceiling,
    queuedMs?: number,
    queueBound = false,
  ): Decision {
    this.#count(reason);
    return { kind: 'refuse', refusal: this.#refusal(reason, bodyBuffered, ceiling, queuedMs, queueBound) };
  }

  #refusal(
    reason: DecisionReason,
    bodyBuffered: boolean,
    ceiling: Ceiling,
    queuedMs?: number,
    queueBound = false,
  ): Refusal {
    const limit = ceiling === 'endpoint' ? this.#roleCapInForce('normal') : this.effective;
    return makeRefusal(
      reason,
      { inflight: this.inflight, queued: this.queue.length, limit },
      this.meanQueueWaitMs,
      bodyBuffered,
      ceiling,
      queuedMs,
      queueBound,
    );
  }

  #count(reason: DecisionReason): void {
    this.decisions[REASON_INDEX[reason]]!++;
  }

  // ---- waiting requests ------------------------------------------------

  /** Ends a waiting request whose client has gone. No-op unless it is still waiting. */
  cancel(ticket: Ticket): void {
    const w = ticket as Waiter;
    if (w.state !== WAITER_QUEUED || !this.live) return;
    this.queue.remove(w);
    w.state = WAITER_ENDED;
    this.tenants.release(w.slot);
    this.#count('cancelled');
  }

  /** True when some waiter could take a free unit right now (the sweep leaves none such behind). */
  hasRunnableWaiter(): boolean {
    return this.cfg.mode === 'enforce' && this.#nextRunnable(this.#o.clock.now()) !== null;
  }

  /**
   * The oldest waiter that could run now: a service unit free, an endpoint
   * with room (P/D requests need none here), and its tenant under its share.
   * Waiters of a tenant at its share keep their place and hold nobody up.
   */
  #nextRunnable(now: number): Waiter | null {
    const q = this.queue;
    if (q.length === 0) return null;
    if (this.#serviceFull(now)) return null;
    const epRoom = this.#normalRoom(now);
    if (!this.shareActive) {
      for (let w = q.head; w; w = w.next) {
        if (w.pd || epRoom) return w;
        if (q.pdLength === 0) return null;
      }
      return null;
    }
    const bound = this.tenantExecBound;
    // The queue is in arrival order: the first eligible waiter near the head is the oldest one.
    let scanned = 0;
    let w: Waiter | null = q.head;
    for (; w !== null && scanned < HEAD_SCAN; w = w.next, scanned++) {
      if (w.slot.exec < bound && (w.pd || epRoom)) return w;
    }
    if (w === null) return null;
    let best: Waiter | null = null;
    for (const slot of this.tenants.waitingSlots()) {
      if (slot.exec >= bound) continue;
      for (let w = slot.head; w; w = w.tnext) {
        if (w.pd || epRoom) {
          if (best === null || w.seq < best.seq) best = w;
          break;
        }
      }
    }
    return best;
  }

  #normalRoom(now: number): boolean {
    for (const ep of this.endpoints) {
      if (ep.role !== 'normal' || !ep.healthy || ep.weight <= 0) continue;
      const cap = this.capOf(ep, now);
      if (cap === 0 || ep.inflight < cap) return true;
    }
    return false;
  }

  /**
   * Hands free units to waiters, oldest eligible first, one per free unit.
   * Re-entrant calls (a host releasing inside `granted`) are folded into the
   * running pass.
   */
  dispatch(): void {
    if (!this.live || this.queue.length === 0) return;
    if (this.#dispatching) {
      this.#redispatch = true;
      return;
    }
    this.#dispatching = true;
    try {
      do {
        this.#redispatch = false;
        const now = this.#o.clock.now();
        for (;;) {
          const w = this.#nextRunnable(now);
          if (w === null) break;
          if (now >= w.deadlineMs) {
            this.#timeout(w, now);
            continue;
          }
          if (!this.#grant(w, now, 'tracked')) return;
        }
      } while (this.#redispatch);
    } finally {
      this.#dispatching = false;
    }
  }

  /**
   * Gives `w` its turn: takes its units, hands the host the permit.
   * @param how 'tracked' within the ceilings; 'over' past them (the pool stopped enforcing);
   *   'untracked' taking no unit (the pool stopped gating)
   * @returns false when the waiter lost its turn (it is back at the head; stop this pass)
   */
  #grant(w: Waiter, now: number, how: 'tracked' | 'over' | 'untracked'): boolean {
    this.queue.remove(w);
    const untracked = how === 'untracked';
    let ep: EndpointState | null = null;
    if (!w.pd) {
      const picked = pickEndpoint(
        this.endpoints,
        'normal',
        (e) => this.capOf(e, now),
        w.preferredEndpoint,
        how !== 'tracked',
      );
      ep = typeof picked === 'object' ? picked : null;
    }
    let permit: Permit;
    if (untracked) {
      permit = new Permit(this, false, ep, null, now, w.context);
    } else {
      if (ep !== null) ep.inflight++;
      this.inflight++;
      this.bucket?.take();
      w.slot.exec++;
      permit = new Permit(this, true, ep, w.slot, now, w.context);
    }
    w.state = WAITER_GRANTED;
    const outcome = this.#o.host.granted(w, permit);
    if (outcome === 'taken') {
      if (how === 'tracked' && w.pd && this.#o.workersOutsideGate !== true) permit.admitCountPending = true;
      else this.#count('admitted');
      this.#recordWait(now - w.enqueuedAtMs);
      if (untracked) this.tenants.release(w.slot);
      return true;
    }
    // Undo the units without waking anyone: this pass decides who goes next.
    permit.released = true;
    if (outcome === 'gone') {
      if (!untracked) this.#giveBack(permit);
      w.state = WAITER_ENDED;
      this.#count('cancelled');
      this.tenants.release(w.slot);
      return true;
    }
    // Back in the queue before the units return, so its tenant slot is never freed in between.
    w.state = WAITER_QUEUED;
    this.queue.reinsert(w);
    this.#watchDeadline(w);
    if (!untracked) this.#giveBack(permit);
    return false;
  }

  #recordWait(ms: number): void {
    this.#noteWait(ms);
    this.queueWaitSumMs += ms;
    this.queueWaitCount++;
    let i = 0;
    while (i < QUEUE_WAIT_BUCKETS_MS.length && ms > QUEUE_WAIT_BUCKETS_MS[i]!) i++;
    this.queueWaitBuckets[i]!++;
  }

  #timeout(w: Waiter, now: number): void {
    this.queue.remove(w);
    w.state = WAITER_ENDED;
    this.tenants.release(w.slot);
    const queuedMs = now - w.enqueuedAtMs;
    this.#noteWait(queuedMs); // this wait counts in its own Retry-After
    this.#count('queue_timeout');
    this.#o.host.ended(w, this.#refusal('queue_timeout', w.bodyBuffered, 'queue', queuedMs));
  }

  /** Appends a newcomer to the queue and makes sure its deadline is watched. */
  #park(w: Waiter): void {
    const last = this.queue.tail;
    this.queue.push(w);
    if (last !== null && last.deadlineMs > w.deadlineMs) this.#deadlinesInOrder = false;
    if (w.deadlineMs < this.#deadlineAtMs) this.#setDeadlineTimer(w.deadlineMs);
  }

  /** A waiter back in the queue by its arrival order: its deadline may now be out of order, or the earliest. */
  #watchDeadline(w: Waiter): void {
    if (
      (w.prev !== null && w.prev.deadlineMs > w.deadlineMs) ||
      (w.next !== null && w.next.deadlineMs < w.deadlineMs)
    )
      this.#deadlinesInOrder = false;
    if (w.deadlineMs < this.#deadlineAtMs) this.#setDeadlineTimer(w.deadlineMs);
  }

  #setDeadlineTimer(atMs: number): void {
    this.#deadlineAtMs = atMs;
    this.#deadlineTimer.set(Math.max(atMs, this.#o.clock.now()));
  }

  /**
   * The deadline timer fired: ends every waiter whose window is over (504, its queue slot
   * free at once), then sets the timer for the earliest deadline left. The timer is not
   * cleared when waiters leave early, so it may fire with nothing due; it then only moves on.
   */
  #deadlineDue(): void {
    this.#deadlineAtMs = Number.POSITIVE_INFINITY;
    if (!this.live) return;
    const now = this.#o.clock.now();
    const due = now + DEADLINE_SLACK_MS;
    const q = this.queue;
    if (this.#deadlinesInOrder) {
      for (let w = q.head; w !== null && w.deadlineMs <= due; w = q.head) this.#timeout(w, now);
    } else {
      for (const w of q.toArray())
        if (w.state === WAITER_QUEUED && w.deadlineMs <= due) this.#timeout(w, now);
    }
    if (q.length === 0) {
      this.#deadlinesInOrder = true;
      return;
    }
    // A host callback inside #timeout may have parked a newcomer and set the timer already.
    const next = this.#earliestDeadline();
    if (next < this.#deadlineAtMs) this.#setDeadlineTimer(next);
  }

  #earliestDeadline(): number {
    const q = this.queue;
    if (this.#deadlinesInOrder) return q.head === null ? Number.POSITIVE_INFINITY : q.head.deadlineMs;
    let min = Number.POSITIVE_INFINITY;
    for (let w = q.head; w !== null; w = w.next) if (w.deadlineMs < min) min = w.deadlineMs;
    return min;
  }

  /** Ends every waiter past its window with admission_queue_timeout (the sweep's backstop). */
  expireWaiters(): void {
    const now = this.#o.clock.now();
    for (const w of this.queue.toArray())
      if (w.state === WAITER_QUEUED && now >= w.deadlineMs) this.#timeout(w, now);
  }

  /** Ends every waiter with admission_drained, oldest first, waking none. */
  drainWaiters(): void {
    const now = this.#o.clock.now();
    for (const w of this.queue.toArray()) {
      if (w.state !== WAITER_QUEUED) continue;
      this.queue.remove(w);
      w.state = WAITER_ENDED;
      this.tenants.release(w.slot);
      this.#count('drained');
      this.#o.host.ended(w, this.#refusal('drained', w.bodyBuffered, 'service', now - w.enqueuedAtMs));
    }
  }

  /** Admits every waiter at once, over any ceiling: the pool no longer enforces. */
  wakeAll(): void {
    const now = this.#o.clock.now();
    const how = this.cfg.mode === 'off' ? 'untracked' : 'over';
    for (const w of this.queue.toArray()) {
      if (w.state !== WAITER_QUEUED) continue;
      if (now >= w.deadlineMs) this.#timeout(w, now);
      else this.#grant(w, now, how);
    }
  }

  // ---- permits -----------------------------------------------------------

  releasePermit(p: Permit): void {
    p.released = true;
    if (p.admitCountPending) {
      p.admitCountPending = false;
      this.#count('admitted');
    }
    if (!p.tracked) return;
    this.#giveBack(p);
    this.dispatch();
  }

  #giveBack(p: Permit): void {
    if (p.endpoint !== null) this.#dec(p.endpoint);
    if (p.legs !== null) {
      for (const leg of p.legs) {
        if (!leg.closed) {
          leg.closed = true;
          this.#dec(leg.endpoint);
        }
      }
    }
    if (this.inflight > 0) this.inflight--;
    else this.#o.anomalies.underflow++;
    this.bucket?.giveBack();
    const slot = p.slot;
    if (slot !== null) {
      if (slot.exec > 0) slot.exec--;
      else this.#o.anomalies.underflow++;
      this.tenants.release(slot);
    }
  }

  #dec(ep: EndpointState): void {
    if (ep.inflight > 0) ep.inflight--;
    else this.#o.anomalies.underflow++;
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
    const now = this.#o.clock.now();
    const observe = this.cfg.mode !== 'enforce';
    const picked = pickEndpointAt(
      this.endpoints,
      role,
      this.roleCap(role),
      this.cfg.warmupMs,
      now,
      preferred,
    );
    let ep: EndpointState;
    if (typeof picked === 'object') ep = picked;
    else if (observe) {
      this.#count('observe_would_shed');
      this.observeCounts.endpoint.shed++;
      const any = pickEndpoint(this.endpoints, role, () => 0, preferred, true);
      if (typeof any !== 'object') return this.#refusal('no_healthy_capacity', true, 'endpoint');
      ep = any;
    } else {
      const reason = picked === PICK_NONE_HEALTHY ? 'no_healthy_capacity' : 'capacity_shed';
      // The request is answered with this refusal: that is its one count (it was not yet counted admitted).
      if (p.admitCountPending) {
        p.admitCountPending = false;
        this.#count(reason);
      }
      return {
        ...this.#refusal(reason, true, 'endpoint'),
        headers: { inflight: this.inflight, queued: this.queue.length, limit: this.#roleCapInForce(role) },
      };
    }
    if (p.tracked && !p.released) ep.inflight++;
    const leg = new Leg(p, role, ep);
    if (!p.tracked || p.released) leg.closed = true;
    if (p.legs === null) p.legs = [leg];
    else p.legs.push(leg);
    if (role === 'decode' && p.admitCountPending) {
      p.admitCountPending = false;
      this.#count('admitted');
    }
    return leg;
  }

  closeLeg(leg: Leg): void {
    leg.closed = true;
    if (leg.permit.tracked && !leg.permit.released) this.#dec(leg.endpoint);
  }

  moveLeg(leg: Leg, to: string): boolean {
    const now = this.#o.clock.now();
    const target = this.endpoints.find((e) => e.id === to && e.role === leg.role && e.healthy);
    if (target === undefined || target === leg.endpoint) return false;
    const cap = this.capOf(target, now);
    if (this.cfg.mode === 'enforce' && cap !== 0 && target.inflight >= cap) return false;
    target.inflight++;
    this.#dec(leg.endpoint);
    leg.endpoint = target;
    return true;
  }

  // ---- the once-a-second work, telemetry, health ------------------------

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
    const c = this.cfg;
    if (!isAdapting(c)) {
      this.effective = c.maxOutstanding;
      this.#resetAdaptState();
      return;
    }
    const s = adaptStep({
      configured: c.maxOutstanding,
      effective: this.effective,
      ttftTargetMs: c.ttftTargetMs,
      staleMs: c.telemetryStaleMs,
      nowMs: this.#o.clock.now(),
      endpoints: this.endpoints,
    });
    this.effective = s.effective;
    this.adaptState = s.state;
    this.adaptReason = s.reason;
    if (s.moved < 0) this.adaptMovesDown++;
    if (s.moved > 0) this.adaptMovesUp++;
  }

  #resetAdaptState(): void {
    const adapting = isAdapting(this.cfg);
    this.adaptState = adapting ? 'open' : 'off';
    this.adaptReason = 'none';
  }

  /** Applies an in-place change of admission fields, then wakes whom it lets through. */
  reconfigure(next: ResolvedConfig): void {
    const prev = this.cfg;
    this.cfg = next;
    const adapting = isAdapting(next);
    const wasAdapting = isAdapting(prev);
    if (!adapting) {
      this.effective = next.maxOutstanding;
      this.#resetAdaptState();
    } else if (!wasAdapting || this.effective >= prev.maxOutstanding) {
      this.effective = next.maxOutstanding;
      if (!wasAdapting) this.#resetAdaptState();
    } else {
      // Tightened: keep the tighter bound, but within the new [quarter, all] of the ceiling in force.
      this.effective = clampAdaptive(this.effective, next.maxOutstanding);
      this.adaptState = this.effective < next.maxOutstanding ? 'tightened' : 'open';
    }
    if (prev.warmupMs > 0 && next.warmupMs === 0) {
      for (const ep of this.endpoints) ep.warmStartMs = Number.NEGATIVE_INFINITY;
    }
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
