/**
 * Recurring timers for the {@link Simulator}: a fixed set of callbacks, each pending at most
 * once, kept in a winner tree (a tournament over the timers' times) instead of the
 * event heap.
 *
 * A simulated engine steps every few milliseconds for the whole run and always has exactly
 * one step pending: as heap events, each step is a removal and an insertion among every other
 * pending event. Here a timer owns a leaf; setting or firing it replays the matches on its
 * path to the root (log2 of the number of timers, six for 64 engines, on small typed arrays
 * that stay in cache). The root is the earliest pending timer; timers due at the same time
 * are ordered by index (the order they were added). The simulator runs a timer after every
 * heap event due at the same time (see `simulator.ts` for why).
 */

/** Key of a timer that is not pending. */
const IDLE = Number.POSITIVE_INFINITY;

export class TimerSet {
  /** Leaves (a power of two >= the number of timers). */
  #leaves = 0;
  #count = 0;
  #pending = 0;
  #time = new Float64Array(0);
  /** `#win[k]` is the timer winning the subtree at node k (1 = root; leaves at `#leaves + i`). */
  #win = new Int32Array(2);
  readonly #fns: (() => void)[] = [];
  /**
   * The timer being fired, whose path to the root has not been replayed since it went idle
   * (-1 when none): most callbacks set their timer again, and one replay then does for both.
   */
  #stale = -1;

  /** Timers pending. */
  get pending(): number {
    return this.#pending;
  }

  /** Adds an idle timer that calls `fn` when it fires. @returns its index */
  add(fn: () => void): number {
    const i = this.#count++;
    this.#fns.push(fn);
    if (this.#count > this.#leaves) this.#grow();
    this.#time[i] = IDLE;
    return i;
  }

  /** Sets timer `i` to fire at `time` (replacing its pending time). */
  set(i: number, time: number): void {
    if (this.#time[i] === IDLE) this.#pending++;
    this.#time[i] = time;
    if (this.#stale === i) this.#stale = -1;
    this.#replay(i);
  }

  /** Makes timer `i` idle. @returns whether it was pending */
  clear(i: number): boolean {
    if (this.#time[i] === IDLE) {
      if (this.#stale === i) {
        this.#stale = -1;
        this.#replay(i);
      }
      return false;
    }
    this.#pending--;
    this.#time[i] = IDLE;
    this.#replay(i);
    return true;
  }

  /** Whether timer `i` is pending. */
  isPending(i: number): boolean {
    return this.#time[i] !== IDLE;
  }

  /** The earliest pending timer, or -1 when none is pending. */
  first(): number {
    const w = this.#win[1] as number;
    return this.#pending === 0 ? -1 : w;
  }

  /** Time of timer `i` (`Infinity` when idle). */
  timeOf(i: number): number {
    return this.#time[i] as number;
  }

  /**
   * Makes timer `i` idle and calls it. The tree is brought up to date after the call (or by
   * the callback setting or clearing the timer), not before: until then the nodes on `i`'s
   * path may still name it, idle, as a winner. Only {@link first} reads those nodes, and
   * nothing calls it during a callback; a replay of another timer's path meanwhile recomputes
   * only nodes off `i`'s path (which do not depend on it) or on it (which `i`'s own replay
   * recomputes afterwards, bottom up).
   */
  fire(i: number): void {
    this.#pending--;
    this.#time[i] = IDLE;
    this.#stale = i;
    try {
      (this.#fns[i] as () => void)();
    } finally {
      if (this.#stale === i) {
        this.#stale = -1;
        this.#replay(i);
      }
    }
  }

  /**
   * Recomputes the matches from leaf `i` up to the root, after `i`'s time changed. It stops at
   * the first match whose winner stays another timer: that subtree's winner and its time are
   * as before, so every match above it is too (a match above won by `i` has `i` winning here as
   * well, and is replayed). Most sets are of a timer that wins only low in the tree.
   */
  #replay(i: number): void {
    const win = this.#win;
    const time = this.#time;
    for (let k = (this.#leaves + i) >> 1; k >= 1; k >>= 1) {
      const a = win[2 * k] as number;
      const b = win[2 * k + 1] as number;
      // a < b always (left subtree), so a tie goes to the lower index.
      const w = (time[a] as number) <= (time[b] as number) ? a : b;
      const before = win[k] as number;
      if (w === before && w !== i) return;
      win[k] = w;
    }
  }

  /** Doubles the leaves and rebuilds the tree (spare leaves are idle timers of their own). */
  #grow(): void {
    const leaves = Math.max(2, this.#leaves * 2);
    const time = new Float64Array(leaves).fill(IDLE);
    time.set(this.#time);
    this.#time = time;
    this.#leaves = leaves;
    this.#win = new Int32Array(2 * leaves);
    for (let i = 0; i < leaves; i++) this.#win[leaves + i] = i;
    for (let k = leaves - 1; k >= 1; k--) {
      const a = this.#win[2 * k] as number;
      const b = this.#win[2 * k + 1] as number;
      this.#win[k] = (time[a] as number) <= (time[b] as number) ? a : b;
    }
  }
}
