/**
 * The bounded FIFO of one pool. Waiters are linked twice: once in arrival
 * order across the pool, once in arrival order within their tenant, so a
 * cancel is O(1), the oldest waiter is the head, and the oldest waiter of a
 * tenant under its share is found by looking at each waiting tenant's head.
 * A woken waiter that could not take its turn goes back in by its first
 * arrival sequence, ahead of later arrivals and behind earlier losers.
 */
import type { TenantSlot } from './tenants.js';

/** Where a waiting request stands. */
export const WAITER_QUEUED = 0;
export const WAITER_GRANTED = 1;
export const WAITER_ENDED = 2;
export type WaiterState = typeof WAITER_QUEUED | typeof WAITER_GRANTED | typeof WAITER_ENDED;

/** What a waiter's pool offers it: ending its wait when its client goes away. */
export interface WaiterOwner {
  cancel(w: Waiter): void;
}

/** A request waiting for a unit. Hosts see it as a `Ticket`. */
export class Waiter {
  state: WaiterState = WAITER_QUEUED;
  prev: Waiter | null = null;
  next: Waiter | null = null;
  tprev: Waiter | null = null;
  tnext: Waiter | null = null;

  /**
   * @param seq arrival order on the pool (never reused)
   * @param enqueuedAtMs when it was first parked
   * @param deadlineMs when its wait window ends (kept across returns to the head)
   */
  constructor(
    readonly seq: number,
    readonly enqueuedAtMs: number,
    readonly deadlineMs: number,
    public slot: TenantSlot,
    readonly pd: boolean,
    readonly bodyBuffered: boolean,
    readonly preferredEndpoint: string | undefined,
    readonly context: unknown,
    readonly owner: WaiterOwner,
  ) {}
}

export class WaitQueue {
  head: Waiter | null = null;
  tail: Waiter | null = null;
  /** Waiters in the queue. */
  length = 0;
  /** Waiters that are P/D requests (they need no normal-role endpoint unit). */
  pdLength = 0;

  /** Appends at the tail (a newcomer). */
  push(w: Waiter): void {
    w.prev = this.tail;
    w.next = null;
    if (this.tail) this.tail.next = w;
    else this.head = w;
    this.tail = w;
    const s = w.slot;
    w.tprev = s.tail;
    w.tnext = null;
    if (s.tail) s.tail.tnext = w;
    else s.head = w;
    s.tail = w;
    s.queued++;
    this.length++;
    if (w.pd) this.pdLength++;
  }

  /** Puts a waiter back by its arrival sequence (a woken loser returning to the head). */
  reinsert(w: Waiter): void {
    let after: Waiter | null = null;
    let cur = this.head;
    while (cur && cur.seq < w.seq) {
      after = cur;
      cur = cur.next;
    }
    w.prev = after;
    w.next = cur;
    if (after) after.next = w;
    else this.head = w;
    if (cur) cur.prev = w;
    else this.tail = w;

    const s = w.slot;
    let tafter: Waiter | null = null;
    let tcur = s.head;
    while (tcur && tcur.seq < w.seq) {
      tafter = tcur;
      tcur = tcur.tnext;
    }
    w.tprev = tafter;
    w.tnext = tcur;
    if (tafter) tafter.tnext = w;
    else s.head = w;
    if (tcur) tcur.tprev = w;
    else s.tail = w;
    s.queued++;
    this.length++;
    if (w.pd) this.pdLength++;
  }

  /** Unlinks a waiter from both lists. */
  remove(w: Waiter): void {
    if (w.prev) w.prev.next = w.next;
    else this.head = w.next;
    if (w.next) w.next.prev = w.prev;
    else this.tail = w.prev;
    w.prev = w.next = null;
    const s = w.slot;
    if (w.tprev) w.tprev.tnext = w.tnext;
    else s.head = w.tnext;
    if (w.tnext) w.tnext.tprev = w.tprev;
    else s.tail = w.tprev;
    w.tprev = w.tnext = null;
    s.queued--;
    this.length--;
    if (w.pd) this.pdLength--;
  }

  /** Waiters from the head, oldest first (a snapshot, safe to modify the queue while iterating). */
  toArray(): Waiter[] {
    const out: Waiter[] = [];
    for (let w = this.head; w; w = w.next) out.push(w);
    return out;
  }
}
