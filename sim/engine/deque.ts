/**
 * A double-ended queue on a growable ring buffer: O(1) push/pop at both ends, for the
 * scheduler's WAITING queue (admission pops the front, preemption pushes to the front).
 */
export class Deque<T> {
  #buf: (T | undefined)[] = new Array<T | undefined>(16);
  #head = 0;
  #length = 0;

  /** Number of items. */
  get length(): number {
    return this.#length;
  }

  /** Item at position `i` from the front (0 = front), or undefined. */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.#length) return undefined;
    return this.#buf[(this.#head + i) & (this.#buf.length - 1)];
  }

  /** First item, or undefined when empty. */
  peekFront(): T | undefined {
    return this.#length === 0 ? undefined : this.#buf[this.#head];
  }

  pushBack(item: T): void {
    if (this.#length === this.#buf.length) this.#grow();
    this.#buf[(this.#head + this.#length) & (this.#buf.length - 1)] = item;
    this.#length++;
  }

  pushFront(item: T): void {
    if (this.#length === this.#buf.length) this.#grow();
    this.#head = (this.#head - 1) & (this.#buf.length - 1);
    this.#buf[this.#head] = item;
    this.#length++;
  }

  popFront(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#buf[this.#head];
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#buf.length - 1);
    this.#length--;
    return item;
  }

  /** Removes the first occurrence of `item` (O(n)). @returns whether it was found */
  remove(item: T): boolean {
    const mask = this.#buf.length - 1;
    for (let i = 0; i < this.#length; i++) {
      if (this.#buf[(this.#head + i) & mask] !== item) continue;
      for (let j = i; j < this.#length - 1; j++) {
        this.#buf[(this.#head + j) & mask] = this.#buf[(this.#head + j + 1) & mask];
      }
      this.#buf[(this.#head + this.#length - 1) & mask] = undefined;
      this.#length--;
      return true;
    }
    return false;
  }

  /** Removes every item. */
  clear(): void {
    this.#buf = new Array<T | undefined>(16);
    this.#head = 0;
    this.#length = 0;
  }

  /** Items front to back. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.#length; i++) out.push(this.at(i) as T);
    return out;
  }

  #grow(): void {
    const old = this.#buf;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.#length; i++) next[i] = old[(this.#head + i) & (old.length - 1)];
    this.#buf = next;
    this.#head = 0;
  }
}
