/**
 * The policy host's side of the defer store (gate/policy/host.ts): what it holds pending, the
 * drain loop that feeds deferred items back into seats, and the ends it writes. A defer adds an
 * item and starts the loop; each tick writes the ends a failing store refused, re-reads the
 * backlog when it may have drifted and asks the host to pump, whose drain step feeds items back
 * (classes by priority, only into a class nobody waits in, only while the core lets it drain);
 * the loop stops once nothing is pending and nothing is owed. Every store call goes through a
 * {@link StoreKeeper}, so a throwing store stops a step, never the host. Pure: time and timers
 * come only from the Clock port.
 */
import type { Clock } from '../clock.js';
import type { Conditions, Grant, PolicyCore } from './decide.js';
import { MemoryDeferStore } from './defer-memory.js';
import type { DeferResult, DeferredItem, DeferStore } from './defer-store.js';
import type { AdmissionEnvelope } from './envelope.js';
import { Lease } from './host-lease.js';
import type { HostScore, TenantAcc } from './host-score.js';
import { type DeferStoreSnapshot, STORE_FAILED, StoreKeeper } from './host-store.js';
import type { Completion, PolicyAdmission, PolicyGateEvents } from './host-types.js';

const NO_PAYLOAD = new Uint8Array(0);
/** Pending items of a class looked at per drain step (expired ones are finished on the way). */
const DRAIN_BATCH = 16;

/**
 * The drain loop's period, checked.
 * @param periodMs ms between drain ticks; default 100
 * @throws RangeError when it is not a finite number above 0
 */
export function drainPeriodMs(periodMs: number | undefined): number {
  const period = periodMs ?? 100;
  if (!(period > 0) || !Number.isFinite(period))
    throw new RangeError(`drainPeriodMs: ${period} must be a finite number above 0`);
  return period;
}

/** What the drain asks of the gate it serves. */
export interface DrainHost<C> {
  /** The core in force (replaced by a swap). */
  readonly core: PolicyCore;
  /** Class indices of the core in force, highest priority first. */
  readonly order: readonly number[];
  /** Requests waiting in the queue of the class with index `classIndex`. */
  queued(classIndex: number): number;
  /** Dispatches waiting work now; with `drain`, a drain step too ({@link DeferDrain.step}). */
  pump(drain: boolean): void;
  /** Puts a lease among the gate's live ones, on its tenant's counters. */
  hold(lease: Lease<C>, slot: TenantAcc): void;
}

/** Options of a {@link DeferDrain}. */
export interface DeferDrainOptions<C> {
  readonly clock: Clock;
  readonly events: PolicyGateEvents<C>;
  readonly score: HostScore;
  readonly host: DrainHost<C>;
  /** Default: a new `MemoryDeferStore`. */
  readonly store?: DeferStore | undefined;
  /** Default: `d` + clock ms + a counter, base 36. */
  readonly deferId?: (() => string) | undefined;
  /** Period of the drain loop, ms (checked by {@link drainPeriodMs}). */
  readonly periodMs: number;
}

/** The defer store as one policy gate uses it: pending count, drain loop, feed-back and ends. */
export class DeferDrain<C> {
  readonly #clock: Clock;
  readonly #events: PolicyGateEvents<C>;
  readonly #score: HostScore;
  readonly #host: DrainHost<C>;
  readonly #store: DeferStore;
  /** The store's calls on the drain path: failures counted, refused ends written later. */
  readonly #keep: StoreKeeper;
  readonly #deferId: () => string;
  readonly #periodMs: number;
  /** Items pending in the store (any class), as this gate knows them. */
  #pending = 0;
  #stop: (() => void) | undefined;
  #ids = 0;
  #closed = false;

  constructor(o: DeferDrainOptions<C>) {
    this.#clock = o.clock;
    this.#events = o.events;
    this.#score = o.score;
    this.#host = o.host;
    this.#store = o.store ?? new MemoryDeferStore();
    this.#keep = new StoreKeeper(this.#store);
    this.#deferId = o.deferId ?? (() => `d${this.#clock.now().toString(36)}-${(this.#ids++).toString(36)}`);
    this.#periodMs = o.periodMs;
  }

  get store(): DeferStore {
    return this.#store;
  }
  /** Deferred items pending in the store, as this gate knows them. */
  get pending(): number {
    return this.#pending;
  }
  /** The store figures of the scorecard. */
  storeSnapshot(): DeferStoreSnapshot {
    return this.#keep.snapshot();
  }

  /**
   * The defer disposition: stores the request as a deferred item and starts the drain loop; a
   * store that refuses turns it into a `class_capacity` reject with Retry-After unknown.
   * @param now ms on the gate's clock
   * @param backlog the class's backlog the core reported, items
   * @param seats the seats the item will take when fed back
   */
  defer(env: AdmissionEnvelope, ctx: C, now: number, backlog: number, seats: number): PolicyAdmission<C> {
    const core = this.#host.core;
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
      this.#score.deferStoreFailed(env.className);
      this.#keep.refusedDefer();
      return {
        kind: 'reject',
        reason: 'class_capacity',
        retryAfter: 'unknown',
        detail: `the defer store refused the request: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    this.#pending++;
    this.#start();
    return { kind: 'defer', item, backlog };
  }

  /**
   * Cancels a deferred item still pending in the store (its client cancelled it).
   * @returns false when it is not pending (fed back, ended or unknown), or the store failed (the
   *   item stays pending; a host whose client left refuses it at feed-back, see onDrain)
   */
  cancel(id: string): boolean {
    const keep = this.#keep;
    const rec = keep.call((s) => s.get(id));
    if (rec === STORE_FAILED || rec === undefined || rec.state !== 'pending') return false;
    const now = this.#clock.now();
    if (keep.call((s) => s.finish(id, 'cancelled', now)) !== true) return false;
    this.#pending--;
    this.#host.core.deferEnded(rec.item.className, rec.item.idempotencyKey, 'failed');
    this.#score.deferEnded(rec.item.className, rec.item.tenant, 'cancelled');
    return true;
  }

  /** Ends a drained item in the store with the completion's status, and its body when the store keeps one. */
  finish(id: string, done: Completion, now: number): void {
    const state = done.outcome === 'cancelled' ? 'cancelled' : 'done';
    const r = done.result;
    this.end(
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
  end(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    now: number,
    status?: number,
    result?: DeferResult,
  ): void {
    if (!this.#keep.end(id, state, now, status, result)) this.#start();
  }

  /** Stops the loop for good (the gate closes); items stay in the store for the next gate. */
  close(): void {
    this.#closed = true;
    this.#halt();
  }

  #start(): void {
    if (this.#stop !== undefined || this.#closed) return;
    this.#stop = this.#clock.every(this.#periodMs, () => this.#tick());
  }

  #halt(): void {
    this.#stop?.();
    this.#stop = undefined;
  }

  /**
   * A drain tick: writes the item ends a failing store refused, re-reads the backlog when it may
   * have drifted, expires items of classes the policy lacks that passed their deadline, then
   * pumps. A store that throws stops the tick there; the next one tries again.
   */
  #tick(): void {
    if (!this.#chores()) {
      // The store failed: no feed-back this tick, but waiting work still dispatches.
      this.#keep.stoppedDrain();
      this.#host.pump(false);
      return;
    }
    if (this.#pending <= 0 && !this.#keep.busy) {
      this.#halt();
      return;
    }
    this.#host.pump(true);
  }

  /** The tick's chores before the feed-back. @returns false when the store failed on the way */
  #chores(): boolean {
    const keep = this.#keep;
    if (!keep.settle()) return false;
    if (keep.resync && !this.restoreBacklog()) return false;
    if (this.#pending <= 0) return true;
    const now = this.#clock.now();
    const backlog = keep.call((s) => s.backlog());
    if (backlog === STORE_FAILED) return false;
    for (const name of backlog.keys()) {
      if (this.#host.core.policy.byName.has(name)) continue;
      const items = keep.call((s) => s.pending(name, DRAIN_BATCH));
      if (items === STORE_FAILED) return false;
      for (const item of items)
        if (now >= item.deadlineMs && this.#expire(item, now) === STORE_FAILED) return false;
    }
    return true;
  }

  /**
   * A drain step (the host's pump runs it while items are pending): feeds deferred items back,
   * classes by priority: only a class with no one waiting in its queue (live requests first),
   * only at the drain pace and only while healthy (the core's mayDrain inside admitDeferred),
   * each item taking seats under the same rules as a new request; items past their deadline end
   * `expired` on the way. Items of classes the policy lacks wait.
   * @param now ms on the gate's clock
   */
  step(cond: Conditions, now: number): void {
    if (!this.#feedClasses(cond, now)) this.#keep.stoppedDrain();
    if (this.#pending <= 0 && !this.#keep.busy) this.#halt();
  }

  /** The feed-back of {@link step}. @returns false when the store failed (the step stops there) */
  #feedClasses(cond: Conditions, now: number): boolean {
    const host = this.#host;
    const core = host.core;
    for (const i of host.order) {
      const c = core.policy.classes[i]!;
      if (host.queued(i) > 0) continue;
      for (let more = true; more && this.#pending > 0; ) {
        const items = this.#keep.call((s) => s.pending(c.name, DRAIN_BATCH));
        if (items === STORE_FAILED) return false;
        if (items.length === 0) break;
        more = items.length === DRAIN_BATCH;
        for (const item of items) {
          if (now >= item.deadlineMs) {
            if (this.#expire(item, now) === STORE_FAILED) return false;
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
  #expire(item: DeferredItem, now: number): boolean | typeof STORE_FAILED {
    const ended = this.#keep.call((s) => s.finish(item.id, 'expired', now));
    if (ended !== true) return ended;
    this.#pending--;
    this.#host.core.deferEnded(item.className, item.idempotencyKey, 'failed');
    this.#score.deferEnded(item.className, item.tenant, 'expired');
    this.#events.onDeferExpire?.(item);
    return true;
  }

  /** Feeds one granted item back. @returns false when the store failed (the drain step stops) */
  #feedBack(item: DeferredItem, g: Grant, now: number): boolean {
    const core = this.#host.core;
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
      this.restoreBacklog();
      return true;
    }
    this.#pending--;
    const ctx = this.#events.onDrain(item);
    if (ctx === undefined) {
      this.end(item.id, 'cancelled', now);
      core.release(g, 'failed');
      this.#score.deferEnded(item.className, item.tenant, 'cancelled');
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
    this.#host.hold(lease, this.#score.granted(g.classIndex, item.tenant, g.seats));
    this.#score.drained(item.className, item.tenant, item.seats, now - item.deferredAtMs);
    this.#events.onDispatch(lease);
    return true;
  }

  /**
   * Re-reads the backlog of every class from the store into the core in force. When the store
   * fails, the counts stay as they were (a swap's new core takes those of `from`, the old one, by
   * class name) and a drain tick re-reads them once it answers.
   * @returns false when the store failed
   */
  restoreBacklog(from: PolicyCore = this.#host.core): boolean {
    const keep = this.#keep;
    const backlog = keep.call((s) => s.backlog());
    const core = this.#host.core;
    if (backlog === STORE_FAILED) {
      if (from !== core)
        for (const c of core.policy.classes) {
          const o = from.policy.byName.get(c.name);
          core.restoreBacklog(c.name, o === undefined ? 0 : from.defers.backlog(o.index));
        }
      keep.resync = true;
      this.#start();
      return false;
    }
    keep.resync = false;
    let n = 0;
    for (const c of core.policy.classes) core.restoreBacklog(c.name, 0);
    for (const [name, count] of backlog) {
      core.restoreBacklog(name, count);
      n += count;
    }
    this.#pending = n;
    if (n > 0) this.#start();
    return true;
  }
}
