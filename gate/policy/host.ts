/**
 * The policy host: {@link PolicyGate} runs a {@link PolicyCore} for the simulator (virtual clock)
 * and the proxy (real clock) alike. It keeps what the core only counts: the waiting requests of
 * every class (fair between tenants, see host-queue.ts), one expiry timer for all of them, the
 * defer store through its drain (host-drain.ts), the leases of admitted work (carried across a
 * policy swap) and the scorecard that outlives swaps. Pure: time and timers come only from the
 * Clock port.
 */
import type { Clock, ClockTimer } from '../clock.js';
import type { Policy, PolicyClass } from './compile.js';
import { type Conditions, PolicyCore, PolicyInputError } from './decide.js';
import type { DeferStore } from './defer-store.js';
import type { AdmissionEnvelope } from './envelope.js';
import { DeferDrain, drainPeriodMs } from './host-drain.js';
import { Lease } from './host-lease.js';
import { ClassLine, ExpiryHeap, type PolicyWaiter, Waiter } from './host-queue.js';
import { HostScore, type PolicySnapshot, type TenantAcc } from './host-score.js';
import type {
  Completion,
  PolicyAdmission,
  PolicyGateEvents,
  PolicyGateOptions,
  PolicyLease,
  QueueExit,
  SwapReport,
} from './host-types.js';

export type {
  Completion,
  LeaseVia,
  PolicyAdmission,
  PolicyGateEvents,
  PolicyGateOptions,
  PolicyLease,
  QueueExit,
  SwapReport,
} from './host-types.js';

const HEALTHY: Conditions = Object.freeze({});

/**
 * A policy gate: the five dispositions with the queue, defer store, dispatch and expiry that make
 * them real. `C` is the host's opaque context of one request (the simulator's job, the proxy's
 * exchange).
 */
export class PolicyGate<C> {
  readonly #clock: Clock;
  readonly #events: PolicyGateEvents<C>;
  readonly #conditions: (() => Conditions) | undefined;
  /** The defer store's side: pending items, the drain loop and the ends it writes. */
  readonly #drain: DeferDrain<C>;
  #core: PolicyCore;
  /** Class lines by class index of the core in force. */
  #lines: ClassLine<C>[];
  /** Class indices, highest priority first (declaration order among equals). */
  #order: number[];
  readonly #heap = new ExpiryHeap<C>();
  readonly #timer: ClockTimer;
  #timerAtMs = Number.POSITIVE_INFINITY;
  /** Live leases: an intrusive doubly linked list (O(1) add and remove, no hashing). */
  #head: Lease<C> | undefined = undefined;
  #leaseCount = 0;
  #waiting = 0;
  #pumping = false;
  #again = false;
  #drainWanted = false;
  #seq = 0;
  #closed = false;
  readonly score: HostScore;

  constructor(o: PolicyGateOptions<C>) {
    this.#clock = o.clock;
    this.#events = o.events;
    this.#conditions = o.conditions;
    const periodMs = drainPeriodMs(o.drainPeriodMs);
    this.#core = new PolicyCore(o.policy, o.clock);
    this.#lines = o.policy.classes.map(() => new ClassLine<C>());
    this.#order = priorityOrder(o.policy.classes);
    this.#timer = o.clock.timer(() => this.#expireDue());
    this.score = new HostScore(o.clock);
    this.score.bind(this.#core);
    const gate = this;
    this.#drain = new DeferDrain<C>({
      clock: o.clock,
      events: o.events,
      score: this.score,
      store: o.store,
      deferId: o.deferId,
      periodMs,
      host: {
        get core() {
          return gate.#core;
        },
        get order() {
          return gate.#order;
        },
        queued: (i) => this.#lines[i]!.size,
        pump: (drain) => this.#pump(drain),
        hold: (lease, slot) => this.#hold(lease, slot),
      },
    });
    this.#drain.restoreBacklog();
  }

  /** The core in force (its seats, intents and counters); replaced by {@link swap}. */
  get core(): PolicyCore {
    return this.#core;
  }
  get policy(): Policy {
    return this.#core.policy;
  }
  get store(): DeferStore {
    return this.#drain.store;
  }
  /** Requests waiting in the queues. */
  get waiting(): number {
    return this.#waiting;
  }
  /** Leases not yet released. */
  get leases(): number {
    return this.#leaseCount;
  }
  /** Deferred items pending in the store, as this gate knows them. */
  get deferPending(): number {
    return this.#drain.pending;
  }
  /** Requests waiting in class `name`'s queue (0 for a class not in the policy). */
  waitingIn(name: string): number {
    const c = this.#core.policy.byName.get(name);
    return c === undefined ? 0 : this.#lines[c.index]!.size;
  }

  #cond(): Conditions {
    return this.#conditions === undefined ? HEALTHY : this.#conditions();
  }

  /**
   * Decides one request and acts on it: admit and degrade return a lease; queue keeps `ctx`
   * until {@link PolicyGateEvents.onDispatch} or {@link PolicyGateEvents.onExpire}; defer stores
   * it (the store's id returned); reject returns the reason. Exactly one disposition.
   */
  submit(env: AdmissionEnvelope, ctx: C, cond: Conditions = this.#cond()): PolicyAdmission<C> {
    if (this.#closed) throw new PolicyInputError('the policy gate is closed');
    const core = this.#core;
    const now = this.#clock.now();
    this.score.observe(cond.healthy !== false, now, this.#waiting, this.#drain.pending);
    const d = core.decide(env, cond);
    switch (d.kind) {
      case 'admit': {
        const g = d.grant;
        const lease = new Lease(
          ctx,
          g,
          g.className,
          g.tenant,
          'admit',
          undefined,
          g.maxOutputTokens,
          env.deadlineMs,
          now,
          now,
          undefined,
          g.idempotencyKey,
        );
        this.#hold(lease, this.score.granted(g.classIndex, g.tenant, g.seats));
        return { kind: 'admit', lease };
      }
      case 'queue': {
        const t = d.ticket;
        const c = core.policy.classes[t.classIndex]!;
        const w = new Waiter(ctx, t, Math.min(t.deadlineMs, t.enqueuedAtMs + c.queue.maxAgeMs), this.#seq++);
        this.#enqueue(w);
        return { kind: 'queue', waiter: w, expectedWaitMs: d.expectedWaitMs };
      }
      case 'degrade': {
        const g = d.grant;
        const lease = new Lease(
          ctx,
          g,
          env.className,
          env.tenant,
          'degrade',
          d.mode,
          g === undefined ? env.cost.maxOutputTokens : g.maxOutputTokens,
          env.deadlineMs,
          now,
          now,
          undefined,
          env.idempotencyKey,
        );
        this.#hold(
          lease,
          g === undefined
            ? this.score.tenantOf(env.className, env.tenant)
            : this.score.granted(g.classIndex, g.tenant, g.seats),
        );
        this.score.degraded(env.className, env.tenant, d.mode);
        return { kind: 'degrade', mode: d.mode, lease };
      }
      case 'defer':
        return this.#drain.defer(env, ctx, now, d.backlog, d.seats);
      case 'reject':
        this.score.shed(core, env.className, env.tenant, d.reason, env.deadlineMs, now, env.cost);
        return d;
    }
  }

  /** Puts a waiter in its line and the expiry heap; `scored` false for one carried by a swap. */
  #enqueue(w: Waiter<C>, scored = true): void {
    const line = this.#lines[w.ticket.classIndex]!;
    line.push(w);
    this.#waiting++;
    this.#heap.push(w);
    if (scored) this.score.enqueued(w.className, w.tenant, w.enqueuedAtMs, line.size, w.tq!.size);
    if (w.expiresAtMs < this.#timerAtMs) this.#setTimer(w.expiresAtMs);
  }

  #hold(l: Lease<C>, slot: TenantAcc): void {
    l.slot = slot;
    l.owner = this;
    const h = this.#head;
    l.next = h;
    if (h !== undefined) h.prev = l;
    this.#head = l;
    this.#leaseCount++;
  }

  #drop(l: Lease<C>): void {
    if (l.prev === undefined) this.#head = l.next;
    else l.prev.next = l.next;
    if (l.next !== undefined) l.next.prev = l.prev;
    l.prev = undefined;
    l.next = undefined;
    this.#leaseCount--;
  }

  /** Takes a waiter out of its line and the heap (the core is told by the caller). */
  #unlink(w: Waiter<C>): void {
    w.waiting = false;
    this.#lines[w.ticket.classIndex]!.remove(w);
    this.#heap.remove(w);
    this.#waiting--;
  }

  /**
   * A queued request leaves without a seat (its client went away).
   * @returns false when it no longer waits (dispatched, expired or already cancelled)
   */
  cancel(waiter: PolicyWaiter<C>): boolean {
    const w = waiter as Waiter<C>;
    if (!(w instanceof Waiter) || !w.waiting) return false;
    const now = this.#clock.now();
    const line = this.#lines[w.ticket.classIndex]!;
    const tq = w.tq!;
    this.#unlink(w);
    this.#core.cancelQueued(w.ticket);
    this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, 'cancelled', line.size, tq.size);
    if (w.deferId !== undefined) this.#drain.end(w.deferId, 'cancelled', now);
    this.#pump();
    return true;
  }

  /**
   * Cancels a deferred item still pending in the store (its client cancelled it).
   * @returns false when it is not pending (fed back, ended or unknown), or the store failed (the
   *   item stays pending; a host whose client left refuses it at feed-back, see onDrain)
   */
  cancelDeferred(id: string): boolean {
    return this.#drain.cancel(id);
  }

  /**
   * Ends admitted work: returns its seats (to the core in force, whatever swaps happened since),
   * scores the completion and dispatches waiting work. A second release is refused.
   * @returns false when the lease was already released
   */
  release(lease: PolicyLease<C>, done: Completion = { outcome: 'completed' }): boolean {
    const l = lease as Lease<C>;
    if (l.released || l.owner !== this) return false;
    l.released = true;
    this.#drop(l);
    const core = this.#core;
    const now = this.#clock.now();
    const g = l.grant;
    if (g === undefined) {
      if (l.idempotencyKey !== undefined)
        core.intentEnded(l.idempotencyKey, done.outcome === 'completed' ? 'completed' : 'failed');
    } else if (l.unclassed) {
      core.releaseUnclassed(g.seats);
      if (l.idempotencyKey !== undefined)
        core.intentEnded(l.idempotencyKey, done.outcome === 'completed' ? 'completed' : 'failed');
    } else core.release(g, done.outcome, l.via === 'drain' ? undefined : done.actual);
    if (l.deferId !== undefined) this.#drain.finish(l.deferId, done, now);
    this.score.completed(l, l.slot!, done, now);
    if (this.#waiting > 0 || this.score.watchingShed) this.#pump();
    return true;
  }

  /** Runs dispatch and a drain step now: for a host whose conditions changed. */
  pump(): void {
    this.#pump(true);
  }

  /**
   * Dispatches waiting work, classes by priority, tenants round-robin inside each; with `drain`
   * (a drain tick, a swap, the host's pump) also feeds deferred items back. Releases do not
   * drain: deferred work waits for the next tick (at most `drainPeriodMs`), so a store is asked
   * for pending items a few times a second, not once per release.
   */
  #pump(drain = false): void {
    if (drain) this.#drainWanted = true;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        const cond = this.#cond();
        const now = this.#clock.now();
        this.score.observe(cond.healthy !== false, now, this.#waiting, this.#drain.pending);
        if (this.#waiting > 0)
          for (const i of this.#order) if (this.#lines[i]!.size > 0) this.#dispatchClass(i, cond);
        this.score.judgeShed(this.#core, now, cond);
        if (this.#drainWanted) {
          this.#drainWanted = false;
          if (this.#drain.pending > 0) this.#drain.step(cond, now);
        }
        this.score.observe(cond.healthy !== false, now, this.#waiting, this.#drain.pending);
      } while (this.#again);
    } finally {
      this.#pumping = false;
    }
  }

  #dispatchClass(i: number, cond: Conditions): void {
    const line = this.#lines[i]!;
    const core = this.#core;
    // One turn per tenant while anyone fits; stop after a full round in which nobody did.
    let misses = 0;
    while (line.size > 0 && misses < line.tenants.size) {
      const tq = line.cursor!;
      const w = tq.head!;
      const out = core.dispatch(w.ticket, cond);
      if (out.kind === 'wait') {
        misses++;
        line.cursor = tq.ringNext;
        continue;
      }
      misses = 0;
      const nextTenant = tq.ringNext;
      this.#unlink(w);
      // Round-robin: the next tenant has the next turn (an emptied tenant left the ring already).
      if (tq.size > 0) line.cursor = nextTenant;
      const now = this.#clock.now();
      if (out.kind === 'expired') {
        this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, out.why, line.size, tq.size);
        this.#expired(w, out.why, now);
        continue;
      }
      this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, 'dispatched', line.size, tq.size);
      const g = out.grant;
      const lease = new Lease(
        w.ctx,
        g,
        g.className,
        g.tenant,
        w.deferId === undefined ? 'queue' : 'drain',
        undefined,
        g.maxOutputTokens,
        w.ticket.deadlineMs,
        now,
        w.ticket.enqueuedAtMs,
        w.deferId,
        g.idempotencyKey,
      );
      this.#hold(lease, this.score.granted(g.classIndex, g.tenant, g.seats));
      this.#events.onDispatch(lease);
    }
  }

  #expired(w: Waiter<C>, why: QueueExit, now: number): void {
    if (w.deferId !== undefined) this.#drain.end(w.deferId, 'expired', now);
    this.score.expiredShed(this.#core, w.className, w.tenant, w.seats, w.deadlineMs, now);
    this.#events.onExpire(w.ctx, why);
  }

  #setTimer(atMs: number): void {
    this.#timerAtMs = atMs;
    this.#timer.set(atMs);
  }
  #clearTimer(): void {
    if (this.#timerAtMs === Number.POSITIVE_INFINITY) return;
    this.#timerAtMs = Number.POSITIVE_INFINITY;
    this.#timer.clear();
  }

  /** The expiry timer fired: every waiter whose deadline or age bound is reached leaves, then the timer is set for the next. */
  #expireDue(): void {
    this.#timerAtMs = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    const core = this.#core;
    for (let w = this.#heap.peek(); w !== undefined && w.expiresAtMs <= now; w = this.#heap.peek()) {
      const line = this.#lines[w.ticket.classIndex]!;
      const tq = w.tq!;
      this.#unlink(w);
      core.cancelQueued(w.ticket);
      const why: QueueExit = now >= w.deadlineMs ? 'deadline' : 'max_age';
      this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, why, line.size, tq.size);
      this.#expired(w, why, now);
    }
    const next = this.#heap.peek();
    if (next !== undefined && next.expiresAtMs < this.#timerAtMs) this.#setTimer(next.expiresAtMs);
    // Expiries freed queue places and maybe borrowing: others may dispatch now.
    this.#pump();
  }

  /**
   * Puts `policy` in force at once (it was parsed and compiled before: a refused file never gets
   * here, and the old policy stays). Leases keep their class: their seats are re-taken in the new
   * core by class name, unchecked (no preemption; until releases bring use under the new limits,
   * new work of that class waits); a lease whose class is gone holds its seats outside every
   * class until released. Waiters keep their class, arrival and deadline (their expiry follows
   * the new age bound); those whose class is gone leave with `class_removed`. Intents (the retry
   * memory) carry over; the defer backlog is re-read from the store. The scorecard goes on.
   */
  swap(policy: Policy): SwapReport {
    if (this.#closed) throw new PolicyInputError('the policy gate is closed');
    const old = this.#core;
    const core = new PolicyCore(policy, this.#clock, { intents: old.intents });
    for (const c of old.policy.classes) {
      const k = old.estimatorCorrection(c.name);
      core.restoreEstimatorCorrection(c.name, k.running, k.samples);
    }
    this.score.retire(old);
    let carriedLeases = 0;
    let unclassedLeases = 0;
    for (let l = this.#head; l !== undefined; l = l.next) {
      const g = l.grant;
      if (g === undefined) continue;
      const ng = core.adoptGrant(g);
      if (ng !== undefined) {
        l.grant = ng;
        l.unclassed = false;
        carriedLeases++;
      } else {
        core.holdUnclassed(g.seats);
        l.unclassed = true;
        unclassedLeases++;
      }
    }
    const waiters: Waiter<C>[] = [];
    for (const i of this.#order) for (const w of this.#lines[i]!.all()) waiters.push(w);
    for (const w of waiters) this.#unlink(w);
    this.#clearTimer();
    this.#core = core;
    this.score.bind(core);
    this.#lines = policy.classes.map(() => new ClassLine<C>());
    this.#order = priorityOrder(policy.classes);
    const now = this.#clock.now();
    let carriedWaiters = 0;
    const removed: Waiter<C>[] = [];
    for (const w of waiters) {
      const nt = core.adoptQueued(w.ticket);
      if (nt === undefined) {
        removed.push(w);
        continue;
      }
      const c = policy.classes[nt.classIndex]!;
      w.rebind(nt, Math.min(nt.deadlineMs, nt.enqueuedAtMs + c.queue.maxAgeMs));
      this.#enqueue(w, false);
      carriedWaiters++;
    }
    this.#drain.restoreBacklog(old);
    for (const w of removed) {
      if (w.ticket.idempotencyKey !== undefined) core.intentEnded(w.ticket.idempotencyKey, 'failed');
      this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, 'class_removed', 0, 0);
      this.#expired(w, 'class_removed', now);
    }
    this.#pump(true);
    return { carriedLeases, unclassedLeases, carriedWaiters, removedWaiters: removed.length };
  }

  /** The scorecard as plain JSON with stable snake_case keys (for summary.json). */
  snapshot(): PolicySnapshot {
    return this.score.snapshot(this.#core, this.#lines, this.#drain.pending, this.#drain.storeSnapshot());
  }

  /** The scorecard in the Prometheus text exposition format (`sluice_policy_*`). */
  metrics(): string {
    return this.score.prometheus(this.snapshot());
  }

  /**
   * Stops the gate: waiters leave with `closed`, the timers stop. Leases may still be released;
   * deferred items stay in the store (the host closes it) for the next gate to drain.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#drain.close();
    this.#clearTimer();
    const now = this.#clock.now();
    const waiters: Waiter<C>[] = [];
    for (const i of this.#order) for (const w of this.#lines[i]!.all()) waiters.push(w);
    for (const w of waiters) {
      this.#unlink(w);
      this.#core.cancelQueued(w.ticket);
      this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, 'closed', 0, 0);
      if (w.deferId !== undefined) this.#drain.end(w.deferId, 'cancelled', now);
      this.#events.onExpire(w.ctx, 'closed');
    }
  }
}

function priorityOrder(classes: readonly PolicyClass[]): number[] {
  return classes.map((c) => c.index).sort((a, b) => classes[b]!.priority - classes[a]!.priority || a - b);
}
