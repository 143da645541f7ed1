/**
 * The defer store in memory (the simulator's, and the tests'): the semantics of the
 * {@link DeferStore} port without a file. `reopen()` stands for a crash and restart: a new store
 * over the same items, every `draining` item back to `pending`, the old store closed.
 */
import type { DeferRecord, DeferResult, DeferredItem, DeferState, DeferStore } from './defer-store.js';

interface Row {
  readonly item: DeferredItem;
  state: DeferState;
  resultStatus: number | undefined;
  result: DeferResult | undefined;
  updatedAtMs: number;
  /** Order of arrival in the store (ties of deferredAtMs). */
  readonly seq: number;
}

/** Why a call on the store was refused: closed, or a duplicate id. */
export class DeferStoreError extends Error {
  override readonly name = 'DeferStoreError';
}

/** An in-memory {@link DeferStore}. */
export class MemoryDeferStore implements DeferStore {
  readonly #rows: Map<string, Row>;
  /** Pending rows per class, oldest first (by deferredAtMs, then arrival). */
  readonly #pending = new Map<string, Row[]>();
  #seq: number;
  #closed = false;

  constructor() {
    this.#rows = new Map();
    this.#seq = 0;
  }

  /** A crash and restart: a new store over these items (draining → pending); this one is closed. */
  reopen(): MemoryDeferStore {
    this.#open();
    this.#closed = true;
    const next = new MemoryDeferStore();
    const rows = [...this.#rows.values()].sort((a, b) => a.seq - b.seq);
    for (const r of rows) {
      const state = r.state === 'draining' ? 'pending' : r.state;
      const row: Row = { ...r, state };
      next.#rows.set(r.item.id, row);
      if (state === 'pending') next.#queue(row);
    }
    for (const q of next.#pending.values()) q.sort(byAge);
    next.#seq = this.#seq;
    return next;
  }

  add(item: DeferredItem): void {
    this.#open();
    if (this.#rows.has(item.id)) throw new DeferStoreError(`defer item ${item.id} already exists`);
    const row: Row = {
      item,
      state: 'pending',
      resultStatus: undefined,
      result: undefined,
      updatedAtMs: item.deferredAtMs,
      seq: this.#seq++,
    };
    this.#rows.set(item.id, row);
    const q = this.#queue(row);
    // Kept in order: an item deferred earlier than the last (a host's clock) goes to its place.
    if (q.length > 1 && byAge(q[q.length - 2]!, row) > 0) q.sort(byAge);
  }

  pending(className: string, limit: number): DeferredItem[] {
    this.#open();
    const q = this.#pending.get(className);
    if (q === undefined) return [];
    const out: DeferredItem[] = [];
    for (const r of q) {
      if (out.length >= limit) break;
      out.push(r.item);
    }
    return out;
  }

  claim(id: string, nowMs: number): boolean {
    this.#open();
    const r = this.#rows.get(id);
    if (r === undefined || r.state !== 'pending') return false;
    this.#unqueue(r);
    r.state = 'draining';
    r.updatedAtMs = nowMs;
    return true;
  }

  finish(id: string, state: 'done' | 'expired' | 'cancelled', nowMs: number, resultStatus?: number): boolean {
    this.#open();
    const r = this.#rows.get(id);
    if (r === undefined || (r.state !== 'pending' && r.state !== 'draining')) return false;
    if (r.state === 'pending') this.#unqueue(r);
    r.state = state;
    r.updatedAtMs = nowMs;
    r.resultStatus = resultStatus;
    return true;
  }

  /** {@link finish} keeping the whole result (a copy of the body) for {@link result}. */
  finishWithResult(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    nowMs: number,
    result: DeferResult,
  ): boolean {
    if (!this.finish(id, state, nowMs, result.status)) return false;
    const r = this.#rows.get(id)!;
    r.result = {
      ...(result.status === undefined ? {} : { status: result.status }),
      ...(result.body === undefined ? {} : { body: new Uint8Array(result.body) }),
      ...(result.contentType === undefined ? {} : { contentType: result.contentType }),
    };
    return true;
  }

  /** The result kept by {@link finishWithResult}, or undefined. */
  result(id: string): DeferResult | undefined {
    this.#open();
    return this.#rows.get(id)?.result;
  }

  get(id: string): DeferRecord | undefined {
    this.#open();
    const r = this.#rows.get(id);
    if (r === undefined) return undefined;
    return {
      item: r.item,
      state: r.state,
      updatedAtMs: r.updatedAtMs,
      ...(r.resultStatus !== undefined ? { resultStatus: r.resultStatus } : {}),
    };
  }

  backlog(): ReadonlyMap<string, number> {
    this.#open();
    const out = new Map<string, number>();
    for (const [name, q] of this.#pending) if (q.length > 0) out.set(name, q.length);
    return out;
  }

  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new DeferStoreError('the defer store is closed');
  }

  #queue(r: Row): Row[] {
    let q = this.#pending.get(r.item.className);
    if (q === undefined) {
      q = [];
      this.#pending.set(r.item.className, q);
    }
    q.push(r);
    return q;
  }

  #unqueue(r: Row): void {
    const q = this.#pending.get(r.item.className)!;
    // Claims come from the head (oldest first); a cancel may come from anywhere.
    const at = q[0] === r ? 0 : q.indexOf(r);
    q.splice(at, 1);
  }
}

function byAge(a: Row, b: Row): number {
  return a.item.deferredAtMs - b.item.deferredAtMs || a.seq - b.seq;
}
