/**
 * A 4-ary min-heap of timed callbacks, ordered by (time, seq).
 *
 * `seq` is an insertion counter, so events at the same time run first-in first-out and a
 * run is a pure function of the order of `push` calls (keys are unique, so the heap's shape
 * cannot change the order). The heap is one Float64Array of (time, seq, slot) triples, four
 * children side by side: half the depth of a binary heap, and a level's compares read one or
 * two cache lines. Callbacks live in plain arrays indexed by slot, so scheduling allocates
 * nothing per event once the arrays have grown. A callback may take one argument, stored
 * beside it, which lets hosts schedule a shared bound function instead of a fresh closure.
 *
 * Cancellation is eager: every slot knows its position in the heap, so a cancelled event
 * leaves the heap at once (O(log n)) and the heap holds pending events only. (A simulation
 * cancels most of what it schedules far ahead, e.g. request deadlines: left in the heap, they
 * would make it many times larger than the live set.) A handle packs (generation, slot) into
 * one number, so a stale handle (the event already ran or was cancelled, and the slot was
 * reused) is recognised and ignored.
 */

/** Opaque handle to a scheduled event; pass it to {@link EventQueue.cancel}. */
export type EventHandle = number;

/** A callback that receives the argument stored with its event. */
export type EventCallback<A> = (arg: A) => void;

/** The event taken off the queue by {@link EventQueue.pop}; the object is reused. */
export interface PoppedEvent {
  /** Event time in the queue's integer unit (µs in the simulator). */
  time: number;
  /** Insertion sequence number. */
  seq: number;
  fn: EventCallback<unknown>;
  arg: unknown;
}

const SLOT_BITS = 22;
/** Most events that may be pending at once (4,194,304). */
export const MAX_PENDING_EVENTS = 2 ** SLOT_BITS;
const MAX_GENERATION = 2 ** (53 - SLOT_BITS) - 1;
const noop: EventCallback<unknown> = () => {};

/** Float64 words per heap entry: time, seq, slot. */
const STRIDE = 3;
/** Children per heap node. */
const ARITY = 4;

export class EventQueue {
  /** Entry i is `heap[3i .. 3i+2]` = (time, seq, slot). */
  #heap = new Float64Array(64 * STRIDE);
  #heapSize = 0;
  #slotFn: (EventCallback<unknown> | null)[] = [];
  #slotArg: unknown[] = [];
  #slotGen: number[] = [];
  /** Heap index of each slot's event (meaningless for a free slot). */
  #slotPos = new Int32Array(64);
  #freeSlots: number[] = [];
  #nextSeq = 0;

  /** Number of scheduled events that are neither run nor cancelled. */
  get size(): number {
    return this.#heapSize;
  }

  /**
   * Adds an event.
   * @param time event time (integer units; the queue only compares it)
   * @param fn callback to run; receives `arg`
   * @returns a handle for {@link cancel}
   */
  push<A>(time: number, fn: EventCallback<A>, arg: A): EventHandle {
    return this.pushWithSeq(time, this.#nextSeq++, fn, arg);
  }

  /**
   * Adds an event with a sequence number from the caller, for events spread over several
   * queues with one counter (it must increase with every push over all of them).
   * @returns a handle for {@link cancel}
   */
  pushWithSeq<A>(time: number, seq: number, fn: EventCallback<A>, arg: A): EventHandle {
    const slot = this.#allocSlot(fn as EventCallback<unknown>, arg);
    if ((this.#heapSize + 1) * STRIDE > this.#heap.length) this.#grow();
    this.#siftUp(this.#heapSize++, time, seq, slot);
    return (this.#slotGen[slot] as number) * MAX_PENDING_EVENTS + slot;
  }

  /**
   * Cancels a pending event.
   * @returns true if the event was pending and is now cancelled; false if it had already run
   * or been cancelled.
   */
  cancel(handle: EventHandle): boolean {
    // Handles pass 2^32, so `%` here would be a floating-point remainder (a runtime call);
    // dividing by a power of two and flooring is exact.
    const gen = Math.floor(handle / MAX_PENDING_EVENTS);
    const slot = handle - gen * MAX_PENDING_EVENTS;
    if (this.#slotGen[slot] !== gen || this.#slotFn[slot] == null) return false;
    this.#removeAt(this.#slotPos[slot] as number);
    this.#freeSlot(slot);
    return true;
  }

  /** Time of the earliest pending event, or `Infinity` when none is pending. */
  peekTime(): number {
    return this.#heapSize === 0 ? Number.POSITIVE_INFINITY : (this.#heap[0] as number);
  }

  /** Sequence number of the earliest pending event, or `Infinity` when none is pending. */
  peekSeq(): number {
    return this.#heapSize === 0 ? Number.POSITIVE_INFINITY : (this.#heap[1] as number);
  }

  /**
   * Removes the earliest pending event and writes it into `out`.
   * @returns false (and leaves `out` untouched) when no event is pending.
   */
  pop(out: PoppedEvent): boolean {
    return this.popUntil(Number.POSITIVE_INFINITY, out);
  }

  /**
   * Like {@link pop}, but only if the earliest event's time is at most `limit`.
   * @returns false (and leaves `out` untouched) when no event is pending by `limit`.
   */
  popUntil(limit: number, out: PoppedEvent): boolean {
    const h = this.#heap;
    if (this.#heapSize === 0 || (h[0] as number) > limit) return false;
    const slot = h[2] as number;
    out.time = h[0] as number;
    out.seq = h[1] as number;
    out.fn = this.#slotFn[slot] as EventCallback<unknown>;
    out.arg = this.#slotArg[slot];
    this.#removeAt(0);
    this.#freeSlot(slot);
    return true;
  }

  /** A fresh object to pass to {@link pop}. */
  static poppedEvent(): PoppedEvent {
    return { time: 0, seq: 0, fn: noop, arg: undefined };
  }

  #allocSlot(fn: EventCallback<unknown>, arg: unknown): number {
    const slot = this.#freeSlots.pop();
    if (slot !== undefined) {
      this.#slotFn[slot] = fn;
      this.#slotArg[slot] = arg;
      return slot;
    }
    const fresh = this.#slotFn.length;
    if (fresh >= MAX_PENDING_EVENTS) {
      throw new RangeError(`Too many pending events (max ${MAX_PENDING_EVENTS})`);
    }
    this.#slotFn.push(fn);
    this.#slotArg.push(arg);
    this.#slotGen.push(0);
    if (fresh === this.#slotPos.length) {
      const pos = new Int32Array(fresh * 2);
      pos.set(this.#slotPos);
      this.#slotPos = pos;
    }
    return fresh;
  }

  #freeSlot(slot: number): void {
    this.#slotFn[slot] = null;
    this.#slotArg[slot] = undefined;
    const gen = (this.#slotGen[slot] as number) + 1;
    // A slot whose generations are used up is retired rather than risk a handle collision.
    this.#slotGen[slot] = gen;
    if (gen <= MAX_GENERATION) this.#freeSlots.push(slot);
  }

  #grow(): void {
    const heap = new Float64Array(this.#heap.length * 2);
    heap.set(this.#heap);
    this.#heap = heap;
  }

  /** Removes the event at heap index `i`, refilling the hole with the last event. */
  #removeAt(i: number): void {
    const last = --this.#heapSize;
    if (i === last) return;
    const h = this.#heap;
    const time = h[last * STRIDE] as number;
    const seq = h[last * STRIDE + 1] as number;
    const slot = h[last * STRIDE + 2] as number;
    // The last event may belong above the hole (only when cancelling inside the heap) or below.
    const parent = ((i - 1) >> 2) * STRIDE;
    if (i > 0 && before(time, seq, h[parent] as number, h[parent + 1] as number)) {
      this.#siftUp(i, time, seq, slot);
    } else {
      this.#siftDown(i, time, seq, slot);
    }
  }

  /** Writes (time, seq, slot) at heap index `i`. */
  #place(i: number, time: number, seq: number, slot: number): void {
    const at = i * STRIDE;
    const h = this.#heap;
    h[at] = time;
    h[at + 1] = seq;
    h[at + 2] = slot;
    this.#slotPos[slot] = i;
  }

  /** Places (time, seq, slot) at heap index `index` or above it. */
  #siftUp(index: number, time: number, seq: number, slot: number): void {
    const h = this.#heap;
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 2;
      const p = parent * STRIDE;
      if (before(h[p] as number, h[p + 1] as number, time, seq)) break;
      this.#place(i, h[p] as number, h[p + 1] as number, h[p + 2] as number);
      i = parent;
    }
    this.#place(i, time, seq, slot);
  }

  /** Places (time, seq, slot) at heap index `index` or below it. */
  #siftDown(index: number, time: number, seq: number, slot: number): void {
    const h = this.#heap;
    const n = this.#heapSize;
    let i = index;
    for (;;) {
      const first = ARITY * i + 1;
      if (first >= n) break;
      // The earliest of up to four children.
      const end = Math.min(first + ARITY, n);
      let best = first;
      let bt = h[first * STRIDE] as number;
      let bs = h[first * STRIDE + 1] as number;
      for (let c = first + 1; c < end; c++) {
        const ct = h[c * STRIDE] as number;
        const cs = h[c * STRIDE + 1] as number;
        if (before(ct, cs, bt, bs)) {
          best = c;
          bt = ct;
          bs = cs;
        }
      }
      if (before(time, seq, bt, bs)) break;
      this.#place(i, bt, bs, h[best * STRIDE + 2] as number);
      i = best;
    }
    this.#place(i, time, seq, slot);
  }
}

/** Whether event (t1, s1) runs before (t2, s2). */
function before(t1: number, s1: number, t2: number, s2: number): boolean {
  return t1 < t2 || (t1 === t2 && s1 < s2);
}
