/**
 * A binary min-heap of timed callbacks, ordered by (time, seq).
 *
 * `seq` is an insertion counter, so events at the same time run first-in first-out and a
 * run is a pure function of the order of `push` calls. Storage is parallel typed arrays
 * (time, seq, slot) for the heap and plain arrays for the callbacks, so scheduling allocates
 * nothing per event once the arrays have grown. A callback may take one argument, stored
 * beside it, which lets hosts schedule a shared bound function instead of a fresh closure.
 *
 * Cancellation is lazy: a cancelled event stays in the heap with its callback cleared and is
 * dropped when it reaches the top. A handle packs (generation, slot) into one number, so a
 * stale handle (the event already ran or was cancelled, and the slot was reused) is
 * recognised and ignored.
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

export class EventQueue {
  #heapTime = new Float64Array(64);
  #heapSeq = new Float64Array(64);
  #heapSlot = new Int32Array(64);
  #heapSize = 0;

  #slotFn: (EventCallback<unknown> | null)[] = [];
  #slotArg: unknown[] = [];
  #slotGen: number[] = [];
  #freeSlots: number[] = [];

  #nextSeq = 0;
  #live = 0;

  /** Number of scheduled events that are neither run nor cancelled. */
  get size(): number {
    return this.#live;
  }

  /**
   * Adds an event.
   * @param time event time (integer units; the queue only compares it)
   * @param fn callback to run; receives `arg`
   * @returns a handle for {@link cancel}
   */
  push<A>(time: number, fn: EventCallback<A>, arg: A): EventHandle {
    const slot = this.#allocSlot(fn as EventCallback<unknown>, arg);
    if (this.#heapSize === this.#heapTime.length) this.#grow();
    const seq = this.#nextSeq++;
    this.#siftUp(this.#heapSize++, time, seq, slot);
    this.#live++;
    return (this.#slotGen[slot] as number) * MAX_PENDING_EVENTS + slot;
  }

  /**
   * Cancels a pending event.
   * @returns true if the event was pending and is now cancelled; false if it had already run
   * or been cancelled.
   */
  cancel(handle: EventHandle): boolean {
    const slot = handle % MAX_PENDING_EVENTS;
    const gen = Math.floor(handle / MAX_PENDING_EVENTS);
    if (this.#slotGen[slot] !== gen || this.#slotFn[slot] == null) return false;
    this.#slotFn[slot] = null;
    this.#slotArg[slot] = undefined;
    this.#live--;
    return true;
  }

  /** Time of the earliest pending event, or `Infinity` when none is pending. */
  peekTime(): number {
    this.#dropCancelledTop();
    return this.#heapSize === 0 ? Number.POSITIVE_INFINITY : (this.#heapTime[0] as number);
  }

  /**
   * Removes the earliest pending event and writes it into `out`.
   * @returns false (and leaves `out` untouched) when no event is pending.
   */
  pop(out: PoppedEvent): boolean {
    this.#dropCancelledTop();
    if (this.#heapSize === 0) return false;
    const slot = this.#heapSlot[0] as number;
    out.time = this.#heapTime[0] as number;
    out.seq = this.#heapSeq[0] as number;
    out.fn = this.#slotFn[slot] as EventCallback<unknown>;
    out.arg = this.#slotArg[slot];
    this.#removeTop();
    this.#freeSlot(slot);
    this.#live--;
    return true;
  }

  /** A fresh object to pass to {@link pop}. */
  static poppedEvent(): PoppedEvent {
    return { time: 0, seq: 0, fn: noop, arg: undefined };
  }

  #dropCancelledTop(): void {
    while (this.#heapSize > 0) {
      const slot = this.#heapSlot[0] as number;
      if (this.#slotFn[slot] != null) return;
      this.#removeTop();
      this.#freeSlot(slot);
    }
  }

  #allocSlot(fn: EventCallback<unknown>, arg: unknown): number {
    const slot = this.#freeSlots.pop();
    if (slot !== undefined) {
      this.#slotFn[slot] = fn;
      this.#slotArg[slot] = arg;
      return slot;
    }
    if (this.#slotFn.length >= MAX_PENDING_EVENTS) {
      throw new RangeError(`Too many pending events (max ${MAX_PENDING_EVENTS})`);
    }
    this.#slotFn.push(fn);
    this.#slotArg.push(arg);
    this.#slotGen.push(0);
    return this.#slotFn.length - 1;
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
    const n = this.#heapTime.length * 2;
    const time = new Float64Array(n);
    const seq = new Float64Array(n);
    const slot = new Int32Array(n);
    time.set(this.#heapTime);
    seq.set(this.#heapSeq);
    slot.set(this.#heapSlot);
    this.#heapTime = time;
    this.#heapSeq = seq;
    this.#heapSlot = slot;
  }

  #siftUp(index: number, time: number, seq: number, slot: number): void {
    const ht = this.#heapTime;
    const hs = this.#heapSeq;
    const hl = this.#heapSlot;
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = ht[parent] as number;
      if (pt < time || (pt === time && (hs[parent] as number) < seq)) break;
      ht[i] = pt;
      hs[i] = hs[parent] as number;
      hl[i] = hl[parent] as number;
      i = parent;
    }
    ht[i] = time;
    hs[i] = seq;
    hl[i] = slot;
  }

  #removeTop(): void {
    const n = --this.#heapSize;
    if (n === 0) return;
    const ht = this.#heapTime;
    const hs = this.#heapSeq;
    const hl = this.#heapSlot;
    const time = ht[n] as number;
    const seq = hs[n] as number;
    const slot = hl[n] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n) {
        const ct = ht[child] as number;
        const rt = ht[right] as number;
        if (rt < ct || (rt === ct && (hs[right] as number) < (hs[child] as number))) child = right;
      }
      const ct = ht[child] as number;
      if (time < ct || (time === ct && seq < (hs[child] as number))) break;
      ht[i] = ct;
      hs[i] = hs[child] as number;
      hl[i] = hl[child] as number;
      i = child;
    }
    ht[i] = time;
    hs[i] = seq;
    hl[i] = slot;
  }
}
