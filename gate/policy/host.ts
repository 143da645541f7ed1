/**
 * The policy host: {@link PolicyGate} runs a {@link PolicyCore} for the simulator (virtual clock)
 * and the proxy (real clock) alike. It keeps what the core only counts: the waiting requests of
 * every class (fair between tenants, see host-queue.ts), one expiry timer for all of them, the
 * defer store and its drain loop, the leases of admitted work (carried across a policy swap) and
 * the scorecard that outlives swaps. Pure: time and timers come only from the Clock port.
 */
import type { Clock, ClockTimer } from '../clock.js';
import type { Policy, PolicyClass } from './compile.js';
import { type Conditions, type Grant, PolicyCore, PolicyInputError } from './decide.js';
import { MemoryDeferStore } from './defer-memory.js';
import type { DeferResult, DeferredItem, DeferStore } from './defer-store.js';
import type { AdmissionEnvelope } from './envelope.js';
import { Lease } from './host-lease.js';
import { ClassLine, ExpiryHeap, type PolicyWaiter, Waiter } from './host-queue.js';
import { HostScore, type PolicySnapshot, type TenantAcc } from './host-score.js';
import { STORE_FAILED, StoreKeeper } from './host-store.js';
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
const NO_PAYLOAD = new Uint8Array(0);
/** Pending items of a class looked at per drain step (expired ones are finished on the way). */
const DRAIN_BATCH = 16;

/**
 * A policy gate: the five dispositions with the queue, defer store, dispatch and expiry that make
 * them real. `C` is the host's opaque context of one request (the simulator's job, the proxy's
 * exchange).
 */
export class PolicyGate<C> {
  readonly #clock: Clock;
  readonly #events: PolicyGateEvents<C>;
  readonly #store: DeferStore;
  /** The store's calls on the drain path: failures counted, refused ends written later. */
  readonly #keep: StoreKeeper;
  readonly #conditions: (() => Conditions) | undefined;
  readonly #deferId: () => string;
  readonly #drainPeriodMs: number;
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
  /** Items pending in the store (any class), as this gate knows them. */
  #deferPending = 0;
  #stopDrain: (() => void) | undefined;
  #pumping = false;
  #again = false;
  #drainWanted = false;
  #seq = 0;
  #ids = 0;
  #closed = false;
  readonly score: HostScore;

  constructor(o: PolicyGateOptions<C>) {
    this.#clock = o.clock;
    this.#events = o.events;
    this.#store = o.store ?? new MemoryDeferStore();
    this.#keep = new StoreKeeper(this.#store);
    this.#conditions = o.conditions;
    this.#deferId = o.deferId ?? (() => `d${this.#clock.now().toString(36)}-${(this.#ids++).toString(36)}`);
    const period = o.drainPeriodMs ?? 100;
    if (!(period > 0) || !Number.isFinite(period))
      throw new RangeError(`drainPeriodMs: ${period} must be a finite number above 0`);
    this.#drainPeriodMs = period;
    this.#core = new PolicyCore(o.policy, o.clock);
    this.#lines = o.policy.classes.map(() => new ClassLine<C>());
    this.#order = priorityOrder(o.policy.classes);
    this.#timer = o.clock.timer(() => this.#expireDue());
    this.score = new HostScore(o.clock, o.recoveryQueueDepth ?? 0);
    this.score.bind(this.#core);
    this.#restoreBacklog();
  }

  /** The core in force (its seats, intents and counters); replaced by {@link swap}. */
  get core(): PolicyCore {
    return this.#core;
  }
  get policy(): Policy {
    return this.#core.policy;
  }
  get store(): DeferStore {
    return this.#store;
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
    return this.#deferPending;
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
    this.score.observe(cond.healthy !== false, now, this.#waiting, this.#deferPending);
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
        return this.#defer(env, ctx, now, d.backlog, d.seats);
      case 'reject':
        this.score.shed(core, env.className, env.tenant, d.reason, env.deadlineMs, now, env.cost);
        return d;
    }
  }

  #defer(env: AdmissionEnvelope, ctx: C, now: number, backlog: number, seats: number): PolicyAdmission<C> {
    const core = this.#core;
    const c = core.policy.byName.get(env.className)!;
    const item: DeferredItem = {
      id: this.#deferId(),
      className: env.className,
      tenant: env.tenant,
      deferredAtMs: now,
      deadlineMs: env.deadlineMs,
      seats,
      ...(env.idempotencyKey !== undefined ? { idempotencyKey: env.idempotencyKey } : {}),
      payload: this.#events.deferPayload?.(ctx) ?? NO_PAYLOAD,
    };
    try {
      this.#store.add(item);
    } catch (e) {
      // The store refused (full disk, closed, duplicate id): nothing was accepted, so say so.
      core.deferEnded(env.className, env.idempotencyKey, 'failed');
      core.score.recount(c.index, env.tenant, 'defer', 'class_capacity');
      this.score.deferStoreFailed(env.className);
      this.#keep.refusedDefer();
      return {
        kind: 'reject',
        reason: 'class_capacity',
        retryAfter: 'unknown',
        detail: `the defer store refused the request: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    this.#deferPending++;
    this.#startDrain();
    return { kind: 'defer', item, backlog };
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
    if (w.deferId !== undefined) this.#end(w.deferId, 'cancelled', now);
    this.#pump();
    return true;
  }

  /**
   * Cancels a deferred item still pending in the store (its client cancelled it).
   * @returns false when it is not pending (fed back, ended or unknown), or the store failed (the
   *   item stays pending; a host whose client left refuses it at feed-back, see onDrain)
   */
  cancelDeferred(id: string): boolean {
    const keep = this.#keep;
    const rec = keep.call((s) => s.get(id));
    if (rec === STORE_FAILED || rec === undefined || rec.state !== 'pending') return false;
    const now = this.#clock.now();
    if (keep.call((s) => s.finish(id, 'cancelled', now)) !== true) return false;
    this.#deferPending--;
    this.#core.deferEnded(rec.item.className, rec.item.idempotencyKey, 'failed');
    this.score.deferEnded(rec.item.className, rec.item.tenant, 'cancelled');
    return true;
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
    if (l.deferId !== undefined) this.#finishDeferred(l.deferId, done, now);
    this.score.completed(l, l.slot!, done, now);
    if (this.#waiting > 0 || this.score.watchingShed) this.#pump();
    return true;
  }

  /** Ends a drained item in the store with the completion's status, and its body when the store keeps one. */
  #finishDeferred(id: string, done: Completion, now: number): void {
    const state = done.outcome === 'cancelled' ? 'cancelled' : 'done';
    const r = done.result;
    this.#end(
      id,
      state,
      now,
      done.status,
      r === undefined
        ? undefined
        : {
            ...(done.status === undefined ? {} : { status: done.status }),
            ...(r.body === undefined ? {} : { body: r.body }),
            ...(r.contentType === undefined ? {} : { contentType: r.contentType }),
          },
    );
  }

  /** Ends an item in the store, or keeps the end for a later drain tick when the store fails. */
  #end(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    now: number,
    status?: number,
    result?: DeferResult,
  ): void {
    if (!this.#keep.end(id, state, now, status, result)) this.#startDrain();
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
        this.score.observe(cond.healthy !== false, now, this.#waiting, this.#deferPending);
        if (this.#waiting > 0)
          for (const i of this.#order) if (this.#lines[i]!.size > 0) this.#dispatchClass(i, cond);
        this.score.judgeShed(this.#core, now, cond);
        if (this.#drainWanted) {
          this.#drainWanted = false;
          if (this.#deferPending > 0) this.#drainStep(cond, now);
        }
        this.score.observe(cond.healthy !== false, now, this.#waiting, this.#deferPending);
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
    if (w.deferId !== undefined) this.#end(w.deferId, 'expired', now);
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

  #startDrain(): void {
    if (this.#stopDrain !== undefined || this.#closed) return;
    this.#stopDrain = this.#clock.every(this.#drainPeriodMs, () => this.#drain());
  }

  /**
   * A drain tick: writes the item ends a failing store refused, re-reads the backlog when it may
   * have drifted, expires items of classes the policy lacks that passed their deadline, then
   * pumps. A store that throws stops the tick there; the next one tries again.
   */
  #drain(): void {
    if (!this.#drainChores()) {
      // The store failed: no feed-back this tick, but waiting work still dispatches.
      this.#keep.stoppedDrain();
      this.#pump();
      return;
    }
    if (this.#deferPending <= 0 && !this.#keep.busy) {
      this.#stopDrain?.();
      this.#stopDrain = undefined;
      return;
    }
    this.#pump(true);
  }

  /** The tick's chores before the feed-back. @returns false when the store failed on the way */
  #drainChores(): boolean {
    const keep = this.#keep;
    if (!keep.settle()) return false;
    if (keep.resync && !this.#restoreBacklog()) return false;
    if (this.#deferPending <= 0) return true;
    const now = this.#clock.now();
    const backlog = keep.call((s) => s.backlog());
    if (backlog === STORE_FAILED) return false;
    for (const name of backlog.keys()) {
      if (this.#core.policy.byName.has(name)) continue;
      const items = keep.call((s) => s.pending(name, DRAIN_BATCH));
      if (items === STORE_FAILED) return false;
      for (const item of items)
        if (now >= item.deadlineMs && this.#expireDeferred(item, now) === STORE_FAILED) return false;
    }
    return true;
  }

  /**
   * Feeds deferred items back, classes by priority: only a class with no one waiting in its
   * queue (live requests first), only at the drain pace and only while healthy (the core's
   * mayDrain inside admitDeferred), each item taking seats under the same rules as a new request;
   * items past their deadline end `expired` on the way. Items of classes the policy lacks wait.
   */
  #drainStep(cond: Conditions, now: number): void {
    if (!this.#feedClasses(cond, now)) this.#keep.stoppedDrain();
    if (this.#deferPending <= 0 && !this.#keep.busy) {
      this.#stopDrain?.();
      this.#stopDrain = undefined;
    }
  }

  /** The feed-back of {@link #drainStep}. @returns false when the store failed (the step stops there) */
  #feedClasses(cond: Conditions, now: number): boolean {
    const core = this.#core;
    for (const i of this.#order) {
      const c = core.policy.classes[i]!;
      if (this.#lines[i]!.size > 0) continue;
      for (let more = true; more && this.#deferPending > 0; ) {
        const items = this.#keep.call((s) => s.pending(c.name, DRAIN_BATCH));
        if (items === STORE_FAILED) return false;
        if (items.length === 0) break;
        more = items.length === DRAIN_BATCH;
        for (const item of items) {
          if (now >= item.deadlineMs) {
            if (this.#expireDeferred(item, now) === STORE_FAILED) return false;
            continue;
          }
          if (c.defer === undefined) {
            more = false;
            break;
          }
          const g = core.admitDeferred(c.name, item.tenant, item.seats, item.idempotencyKey, cond);
          if (g === undefined) {
            more = false;
            break;
          }
          if (!this.#feedBack(item, g, now)) return false;
        }
      }
    }
    return true;
  }

  /** Ends a pending item past its deadline. @returns whether it ended, or STORE_FAILED (it stays pending) */
  #expireDeferred(item: DeferredItem, now: number): boolean | typeof STORE_FAILED {
    const ended = this.#keep.call((s) => s.finish(item.id, 'expired', now));
    if (ended !== true) return ended;
    this.#deferPending--;
    this.#core.deferEnded(item.className, item.idempotencyKey, 'failed');
    this.score.deferEnded(item.className, item.tenant, 'expired');
    this.#events.onDeferExpire?.(item);
    return true;
  }

  /** Feeds one granted item back. @returns false when the store failed (the drain step stops) */
  #feedBack(item: DeferredItem, g: Grant, now: number): boolean {
    const core = this.#core;
    const claimed = this.#keep.call((s) => s.claim(item.id, now));
    if (claimed === STORE_FAILED) {
      // Not claimed: the seats go back, the item stays pending and counted; re-read once it answers.
      core.seats.release(g);
      core.restoreBacklog(item.className, core.defers.backlog(g.classIndex) + 1);
      this.#keep.resync = true;
      return false;
    }
    if (!claimed) {
      // Claimed elsewhere or ended meanwhile: the seats go back, the counts follow the store.
      core.seats.release(g);
      this.#restoreBacklog();
      return true;
    }
    this.#deferPending--;
    const ctx = this.#events.onDrain(item);
    if (ctx === undefined) {
      this.#end(item.id, 'cancelled', now);
      core.release(g, 'failed');
      this.score.deferEnded(item.className, item.tenant, 'cancelled');
      return true;
    }
    const lease = new Lease(
      ctx,
      g,
      item.className,
      item.tenant,
      'drain',
      undefined,
      undefined,
      item.deadlineMs,
      now,
      item.deferredAtMs,
      item.id,
      item.idempotencyKey,
    );
    this.#hold(lease, this.score.granted(g.classIndex, item.tenant, g.seats));
    this.score.drained(item.className, item.tenant, item.seats, now - item.deferredAtMs);
    this.#events.onDispatch(lease);
    return true;
  }

  /**
   * Re-reads the backlog of every class from the store. When the store fails, the counts stay as
   * they were (a swap's new core takes the old one's, by class name) and a drain tick re-reads
   * them once it answers.
   * @returns false when the store failed
   */
  #restoreBacklog(from: PolicyCore = this.#core): boolean {
    const keep = this.#keep;
    const backlog = keep.call((s) => s.backlog());
    const core = this.#core;
    if (backlog === STORE_FAILED) {
      if (from !== core)
        for (const c of core.policy.classes) {
          const o = from.policy.byName.get(c.name);
          core.restoreBacklog(c.name, o === undefined ? 0 : from.defers.backlog(o.index));
        }
      keep.resync = true;
      this.#startDrain();
      return false;
    }
    keep.resync = false;
    let n = 0;
    for (const c of core.policy.classes) core.restoreBacklog(c.name, 0);
    for (const [name, count] of backlog) {
      core.restoreBacklog(name, count);
      n += count;
    }
    this.#deferPending = n;
    if (n > 0) this.#startDrain();
    return true;
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
    this.#restoreBacklog(old);
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
    return this.score.snapshot(this.#core, this.#lines, this.#deferPending, this.#keep.snapshot());
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
    this.#stopDrain?.();
    this.#stopDrain = undefined;
    this.#clearTimer();
    const now = this.#clock.now();
    const waiters: Waiter<C>[] = [];
    for (const i of this.#order) for (const w of this.#lines[i]!.all()) waiters.push(w);
    for (const w of waiters) {
      this.#unlink(w);
      this.#core.cancelQueued(w.ticket);
      this.score.left(w.className, w.tenant, now, now - w.enqueuedAtMs, 'closed', 0, 0);
      if (w.deferId !== undefined) this.#keep.end(w.deferId, 'cancelled', now);
      this.#events.onExpire(w.ctx, 'closed');
    }
  }
}

function priorityOrder(classes: readonly PolicyClass[]): number[] {
  return classes.map((c) => c.index).sort((a, b) => classes[b]!.priority - classes[a]!.priority || a - b);
}
