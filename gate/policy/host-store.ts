/**
 * How the policy host bears a defer store that throws (a full disk, a dead SQLite file): every
 * call on the drain path goes through {@link StoreKeeper.call}, which counts a failure and hands
 * back {@link STORE_FAILED} instead of throwing, so the drain tick that met it stops and a later
 * one tries again. An item's end (done, expired, cancelled) the store refused is kept, in order,
 * and written on a later tick ({@link StoreKeeper.settle}); until then the store still shows the
 * item `draining`, so it is never listed pending, never fed back twice and never lost.
 */
import type { DeferResult, DeferStore } from './defer-store.js';

/** What {@link StoreKeeper.call} returns when the store threw. */
export const STORE_FAILED: unique symbol = Symbol('defer store failed');

/** The store figures of the scorecard (summary.json's `policy.scorecard.defer_store`). */
export interface DeferStoreSnapshot {
  /** Store calls that threw, any call (a refused defer, a drain step, an end, a cancel). */
  failures: number;
  /** Defers refused because the store threw (rejected `class_capacity`, Retry-After unknown). */
  refused_defers: number;
  /** Drain steps stopped by a failing store (the next tick tries again). */
  stopped_drains: number;
  /** Item ends (done, expired, cancelled) the store refused, not yet written. */
  unrecorded_ends: number;
}

type EndState = 'done' | 'expired' | 'cancelled';

interface OwedEnd {
  readonly id: string;
  readonly state: EndState;
  /** When the item ended, ms on the gate's clock (kept as the store's updatedAtMs). */
  readonly atMs: number;
  readonly status: number | undefined;
  /** Set when the store is to keep the backend's whole answer (finishWithResult). */
  readonly result: DeferResult | undefined;
}

/** The defer store as the host uses it: failures counted, refused ends kept for later. */
export class StoreKeeper {
  readonly store: DeferStore;
  #failures = 0;
  #refusedDefers = 0;
  #stoppedDrains = 0;
  /** Ends the store refused, oldest first, by item id. */
  readonly #owed = new Map<string, OwedEnd>();
  /** Set when the host's backlog counts may differ from the store's (re-read once it answers). */
  resync = false;

  constructor(store: DeferStore) {
    this.store = store;
  }

  /** Ends owed or a resync wanted: the drain loop must keep ticking even with nothing pending. */
  get busy(): boolean {
    return this.#owed.size > 0 || this.resync;
  }

  /** Runs one store call; a throw is counted and becomes {@link STORE_FAILED}. */
  call<T>(fn: (store: DeferStore) => T): T | typeof STORE_FAILED {
    try {
      return fn(this.store);
    } catch {
      this.#failures++;
      return STORE_FAILED;
    }
  }

  /** A defer the store refused (the host rejected it). */
  refusedDefer(): void {
    this.#failures++;
    this.#refusedDefers++;
  }

  /** A drain step stopped at a failing call. */
  stoppedDrain(): void {
    this.#stoppedDrains++;
  }

  /**
   * Ends item `id` in the store (with the status, or the backend's whole `result` when given and
   * the store keeps one), or keeps the
   * end for {@link settle} when the store throws, or while earlier ends still wait (their order).
   * @returns false when the end was kept for later (the host must keep its drain loop ticking)
   */
  end(id: string, state: EndState, atMs: number, status?: number, result?: DeferResult): boolean {
    const e: OwedEnd = { id, state, atMs, status, result };
    if (this.#owed.size === 0 && this.#write(e) !== STORE_FAILED) return true;
    this.#owed.set(id, e);
    return false;
  }

  /**
   * Writes the kept ends, oldest first, stopping at the first the store refuses.
   * @returns true when none is left
   */
  settle(): boolean {
    for (const e of this.#owed.values()) {
      if (this.#write(e) === STORE_FAILED) return false;
      this.#owed.delete(e.id);
    }
    return true;
  }

  snapshot(): DeferStoreSnapshot {
    return {
      failures: this.#failures,
      refused_defers: this.#refusedDefers,
      stopped_drains: this.#stoppedDrains,
      unrecorded_ends: this.#owed.size,
    };
  }

  #write(e: OwedEnd): boolean | typeof STORE_FAILED {
    const r = e.result;
    return this.call((s) =>
      r !== undefined && s.finishWithResult !== undefined
        ? s.finishWithResult(e.id, e.state, e.atMs, r)
        : s.finish(e.id, e.state, e.atMs, e.status),
    );
  }
}
