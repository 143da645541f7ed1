/**
 * The waiting requests of a policy host: one line per class, inside it one FIFO per tenant served
 * round-robin (the principle of fair queuing between flows inside a priority level, as in
 * Kubernetes API Priority and Fairness,
 * <https://kubernetes.io/docs/concepts/cluster-administration/flow-control/>: one flow cannot take
 * every turn), and one min-heap of every waiter's expiry time (its deadline or its queue's age
 * bound, whichever is first) for the host's single expiry timer. Every operation is O(1) or
 * O(log n); nothing here knows about seats (the core decides whether a waiter fits).
 */
import type { QueueTicket } from './decide.js';

/** A request waiting in its class queue, as the host sees it. */
export interface PolicyWaiter<C> {
  readonly ctx: C;
  readonly className: string;
  readonly tenant: string;
  readonly seats: number;
  /** ms on the gate's clock. */
  readonly enqueuedAtMs: number;
  readonly deadlineMs: number;
  /** When it leaves the queue unless dispatched first: min(deadline, arrival + max_age_ms), ms. */
  readonly expiresAtMs: number;
  /** True while it waits; false once dispatched, expired or cancelled. */
  readonly waiting: boolean;
}

/** A waiter, with its links (internal). */
export class Waiter<C> implements PolicyWaiter<C> {
  readonly ctx: C;
  ticket: QueueTicket;
  expiresAtMs: number;
  readonly seq: number;
  waiting = true;
  /** Set when it carries a deferred item fed back (its store id). */
  readonly deferId: string | undefined;
  tq: TenantQueue<C> | null = null;
  prev: Waiter<C> | null = null;
  next: Waiter<C> | null = null;
  heapIndex = -1;

  constructor(ctx: C, ticket: QueueTicket, expiresAtMs: number, seq: number, deferId?: string) {
    this.ctx = ctx;
    this.ticket = ticket;
    this.expiresAtMs = expiresAtMs;
    this.seq = seq;
    this.deferId = deferId;
  }
  /** The same waiter (the host's handle stays valid) under another core's ticket (a policy swap). */
  rebind(ticket: QueueTicket, expiresAtMs: number): this {
    this.ticket = ticket;
    this.expiresAtMs = expiresAtMs;
    this.waiting = true;
    return this;
  }
  get className(): string {
    return this.ticket.className;
  }
  get tenant(): string {
    return this.ticket.tenant;
  }
  get seats(): number {
    return this.ticket.seats;
  }
  get enqueuedAtMs(): number {
    return this.ticket.enqueuedAtMs;
  }
  get deadlineMs(): number {
    return this.ticket.deadlineMs;
  }
}

/** One tenant's FIFO inside a class line, linked into the line's ring of tenants. */
export class TenantQueue<C> {
  readonly tenant: string;
  head: Waiter<C> | null = null;
  tail: Waiter<C> | null = null;
  size = 0;
  ringPrev: TenantQueue<C> = this;
  ringNext: TenantQueue<C> = this;
  constructor(tenant: string) {
    this.tenant = tenant;
  }
}

/** The waiters of one class: a ring of tenant FIFOs and a cursor, the tenant served next. */
export class ClassLine<C> {
  readonly tenants = new Map<string, TenantQueue<C>>();
  cursor: TenantQueue<C> | null = null;
  size = 0;
  costSeats = 0;

  push(w: Waiter<C>): void {
    const t = w.ticket.tenant;
    let tq = this.tenants.get(t);
    if (tq === undefined) {
      tq = new TenantQueue<C>(t);
      this.tenants.set(t, tq);
      const c = this.cursor;
      if (c === null) this.cursor = tq;
      else {
        // A new tenant joins the ring just before the cursor: served after those already waiting.
        tq.ringPrev = c.ringPrev;
        tq.ringNext = c;
        c.ringPrev.ringNext = tq;
        c.ringPrev = tq;
      }
    }
    w.tq = tq;
    w.prev = tq.tail;
    w.next = null;
    if (tq.tail === null) tq.head = w;
    else tq.tail.next = w;
    tq.tail = w;
    tq.size++;
    this.size++;
    this.costSeats += w.ticket.seats;
  }

  /** Unlinks a waiter; its tenant leaves the ring when it has no one left. */
  remove(w: Waiter<C>): void {
    const tq = w.tq!;
    if (w.prev === null) tq.head = w.next;
    else w.prev.next = w.next;
    if (w.next === null) tq.tail = w.prev;
    else w.next.prev = w.prev;
    w.prev = null;
    w.next = null;
    w.tq = null;
    tq.size--;
    this.size--;
    this.costSeats -= w.ticket.seats;
    if (tq.size === 0) {
      this.tenants.delete(tq.tenant);
      if (tq.ringNext === tq) this.cursor = null;
      else {
        tq.ringPrev.ringNext = tq.ringNext;
        tq.ringNext.ringPrev = tq.ringPrev;
        if (this.cursor === tq) this.cursor = tq.ringNext;
      }
      tq.ringNext = tq;
      tq.ringPrev = tq;
    }
  }

  /** The earliest arrival among the heads (the oldest waiter), or undefined when empty. */
  oldestEnqueuedAtMs(): number | undefined {
    let min: number | undefined;
    for (const tq of this.tenants.values()) {
      const at = tq.head!.ticket.enqueuedAtMs;
      if (min === undefined || at < min) min = at;
    }
    return min;
  }

  /** Every waiter, tenant by tenant from the cursor, each tenant's oldest first. */
  *all(): IterableIterator<Waiter<C>> {
    const start = this.cursor;
    if (start === null) return;
    let tq = start;
    do {
      const nextTq = tq.ringNext;
      for (let w = tq.head; w !== null; ) {
        const n = w.next;
        yield w;
        w = n;
      }
      tq = nextTq;
    } while (tq !== start && this.cursor !== null);
  }
}

/** A binary min-heap of waiters by (expiresAtMs, seq), each knowing its index for O(log n) removal. */
export class ExpiryHeap<C> {
  readonly #a: Waiter<C>[] = [];

  get size(): number {
    return this.#a.length;
  }
  peek(): Waiter<C> | undefined {
    return this.#a[0];
  }

  push(w: Waiter<C>): void {
    w.heapIndex = this.#a.length;
    this.#a.push(w);
    this.#up(w.heapIndex);
  }

  remove(w: Waiter<C>): void {
    const i = w.heapIndex;
    if (i < 0) return;
    const last = this.#a.pop()!;
    w.heapIndex = -1;
    if (i === this.#a.length) return;
    this.#a[i] = last;
    last.heapIndex = i;
    this.#down(i);
    this.#up(last.heapIndex);
  }

  #less(x: Waiter<C>, y: Waiter<C>): boolean {
    return x.expiresAtMs < y.expiresAtMs || (x.expiresAtMs === y.expiresAtMs && x.seq < y.seq);
  }

  #up(i: number): void {
    const a = this.#a;
    const w = a[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pw = a[p]!;
      if (!this.#less(w, pw)) break;
      a[i] = pw;
      pw.heapIndex = i;
      i = p;
    }
    a[i] = w;
    w.heapIndex = i;
  }

  #down(i: number): void {
    const a = this.#a;
    const n = a.length;
    const w = a[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.#less(a[r]!, a[l]!) ? r : l;
      const cw = a[c]!;
      if (!this.#less(cw, w)) break;
      a[i] = cw;
      cw.heapIndex = i;
      i = c;
    }
    a[i] = w;
    w.heapIndex = i;
  }
}
