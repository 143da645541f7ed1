/**
 * A pool's queue service: parking waiters, the one deadline timer that ends
 * them on time, and handing free units to them.
 *
 * Turns are handed over at release time: a release picks the oldest eligible
 * waiter, takes the units for it and hands the host a ready permit, so a
 * newcomer can never barge in between (no wake-and-race). The host may answer
 * that the waiter could not take it now ('lost': the waiter returns to the
 * head by its first arrival, keeping its deadline, and the next release or
 * the once-a-second sweep retries) or that its client has gone ('gone': the
 * turn passes to the next waiter).
 */
import type { ClockTimer } from './clock.js';
import type { EndpointState } from './endpoints.js';
import { Permit } from './permit.js';
import type { Pool, PoolOptions } from './pool.js';
import { serviceFull } from './pool-ceilings.js';
import { giveBack } from './pool-permits.js';
import { poolRefusal } from './pool-refusal.js';
import type { PoolTelemetry } from './pool-telemetry.js';
import { WAITER_ENDED, WAITER_GRANTED, WAITER_QUEUED, Waiter } from './queue.js';
import type { TenantSlot } from './tenants.js';

/**
 * A deadline this close ahead counts as reached when the deadline timer fires (ms): the
 * simulator keeps whole microseconds, so a timer set at a fractional deadline may fire up
 * to half a microsecond before it.
 */
const DEADLINE_SLACK_MS = 0.001;
/** Waiters looked at from the head before the search falls back to each waiting tenant's oldest. */
const HEAD_SCAN = 16;

export class QueueService {
  readonly #pool: Pool;
  readonly #o: PoolOptions;
  readonly #t: PoolTelemetry;
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

  constructor(pool: Pool, o: PoolOptions, t: PoolTelemetry) {
    this.#pool = pool;
    this.#o = o;
    this.#t = t;
    this.#deadlineTimer = o.clock.timer(() => this.#deadlineDue());
  }

  /** Stops the deadline timer for good (the pool was retired). */
  stop(): void {
    this.#deadlineTimer.clear();
    this.#deadlineAtMs = Number.POSITIVE_INFINITY;
  }

  /**
   * Parks a newcomer arriving at `now` (ms) for the pool's wait window and watches its deadline.
   * @returns the waiter, which the host holds as its ticket
   */
  park(
    now: number,
    slot: TenantSlot,
    pd: boolean,
    bodyBuffered: boolean,
    preferredEndpoint: string | undefined,
    context: unknown,
  ): Waiter {
    const pool = this.#pool;
    const w = new Waiter(
      this.#seq++,
      now,
      now + pool.cfg.queueWaitMs,
      slot,
      pd,
      bodyBuffered,
      preferredEndpoint,
      context,
      pool,
    );
    const q = pool.queue;
    const last = q.tail;
    q.push(w);
    if (last !== null && last.deadlineMs > w.deadlineMs) this.#deadlinesInOrder = false;
    if (w.deadlineMs < this.#deadlineAtMs) this.#setDeadlineTimer(w.deadlineMs);
    return w;
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
    if (!this.#pool.live) return;
    const now = this.#o.clock.now();
    const due = now + DEADLINE_SLACK_MS;
    const q = this.#pool.queue;
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
    const q = this.#pool.queue;
    if (this.#deadlinesInOrder) return q.head === null ? Number.POSITIVE_INFINITY : q.head.deadlineMs;
    let min = Number.POSITIVE_INFINITY;
    for (let w = q.head; w !== null; w = w.next) if (w.deadlineMs < min) min = w.deadlineMs;
    return min;
  }

  /** Ends a waiting request whose client has gone. No-op unless it is still waiting. */
  cancel(w: Waiter): void {
    const pool = this.#pool;
    if (w.state !== WAITER_QUEUED || !pool.live) return;
    pool.queue.remove(w);
    w.state = WAITER_ENDED;
    pool.tenants.release(w.slot);
    this.#t.count('cancelled');
  }

  /**
   * The oldest waiter that could run now: a service unit free, an endpoint
   * with room (P/D requests need none here), and its tenant under its share.
   * Waiters of a tenant at its share keep their place and hold nobody up.
   */
  nextRunnable(now: number): Waiter | null {
    const pool = this.#pool;
    const q = pool.queue;
    if (q.length === 0) return null;
    if (serviceFull(pool, now)) return null;
    const epRoom = this.#normalRoom(now);
    if (!pool.shareActive) {
      for (let w = q.head; w; w = w.next) {
        if (w.pd || epRoom) return w;
        if (q.pdLength === 0) return null;
      }
      return null;
    }
    const bound = pool.tenantExecBound;
    // The queue is in arrival order: the first eligible waiter near the head is the oldest one.
    let scanned = 0;
    let w: Waiter | null = q.head;
    for (; w !== null && scanned < HEAD_SCAN; w = w.next, scanned++) {
      if (w.slot.exec < bound && (w.pd || epRoom)) return w;
    }
    if (w === null) return null;
    let best: Waiter | null = null;
    for (const slot of pool.tenants.waitingSlots()) {
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
    const pool = this.#pool;
    for (const ep of pool.endpoints) {
      if (ep.role !== 'normal' || !ep.healthy || ep.weight <= 0) continue;
      const cap = pool.capOf(ep, now);
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
    if (!this.#pool.live || this.#pool.queue.length === 0) return;
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
          const w = this.nextRunnable(now);
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
    const pool = this.#pool;
    const o = this.#o;
    pool.queue.remove(w);
    const untracked = how === 'untracked';
    let ep: EndpointState | null = null;
    if (!w.pd) {
      // pool.capOf(ep, now) of a normal endpoint is endpointCap(ep, roleCap('normal'), warmupMs, now).
      const picked =
        how === 'tracked'
          ? pool.picker.pickAt('normal', pool.roleCap('normal'), pool.cfg.warmupMs, now, w.preferredEndpoint)
          : pool.picker.pickIgnoringRoom('normal', w.preferredEndpoint);
      ep = typeof picked === 'object' ? picked : null;
    }
    let permit: Permit;
    if (untracked) {
      permit = new Permit(pool, false, ep, null, now, w.context);
    } else {
      if (ep !== null) ep.inflight++;
      pool.inflight++;
      pool.bucket?.take();
      w.slot.exec++;
      permit = new Permit(pool, true, ep, w.slot, now, w.context);
    }
    w.state = WAITER_GRANTED;
    const outcome = o.host.granted(w, permit);
    if (outcome === 'taken') {
      if (how === 'tracked' && w.pd && o.workersOutsideGate !== true) permit.admitCountPending = true;
      else this.#t.count('admitted');
      this.#t.recordWait(now - w.enqueuedAtMs);
      if (untracked) pool.tenants.release(w.slot);
      return true;
    }
    // Undo the units without waking anyone: this pass decides who goes next.
    permit.released = true;
    if (outcome === 'gone') {
      if (!untracked) giveBack(pool, o, permit);
      w.state = WAITER_ENDED;
      this.#t.count('cancelled');
      pool.tenants.release(w.slot);
      return true;
    }
    // Back in the queue before the units return, so its tenant slot is never freed in between.
    w.state = WAITER_QUEUED;
    pool.queue.reinsert(w);
    this.#watchDeadline(w);
    if (!untracked) giveBack(pool, o, permit);
    return false;
  }

  #timeout(w: Waiter, now: number): void {
    const pool = this.#pool;
    pool.queue.remove(w);
    w.state = WAITER_ENDED;
    pool.tenants.release(w.slot);
    const queuedMs = now - w.enqueuedAtMs;
    this.#t.noteWait(queuedMs); // this wait counts in its own Retry-After
    this.#t.count('queue_timeout');
    this.#o.host.ended(
      w,
      poolRefusal(pool, this.#o.clock, 'queue_timeout', w.bodyBuffered, 'queue', queuedMs),
    );
  }

  /** Ends every waiter past its window with admission_queue_timeout (the sweep's backstop). */
  expireWaiters(): void {
    const now = this.#o.clock.now();
    for (const w of this.#pool.queue.toArray())
      if (w.state === WAITER_QUEUED && now >= w.deadlineMs) this.#timeout(w, now);
  }

  /** Ends every waiter with admission_drained, oldest first, waking none. */
  drainWaiters(): void {
    const pool = this.#pool;
    const now = this.#o.clock.now();
    for (const w of pool.queue.toArray()) {
      if (w.state !== WAITER_QUEUED) continue;
      pool.queue.remove(w);
      w.state = WAITER_ENDED;
      pool.tenants.release(w.slot);
      this.#t.count('drained');
      this.#o.host.ended(
        w,
        poolRefusal(pool, this.#o.clock, 'drained', w.bodyBuffered, 'service', now - w.enqueuedAtMs),
      );
    }
  }

  /** Admits every waiter at once, over any ceiling: the pool no longer enforces. */
  wakeAll(): void {
    const now = this.#o.clock.now();
    const how = this.#pool.cfg.mode === 'off' ? 'untracked' : 'over';
    for (const w of this.#pool.queue.toArray()) {
      if (w.state !== WAITER_QUEUED) continue;
      if (now >= w.deadlineMs) this.#timeout(w, now);
      else this.#grant(w, now, how);
    }
  }
}
