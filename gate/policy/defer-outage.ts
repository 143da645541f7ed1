/**
 * A {@link DeferStore} that can be made to fail: every call throws while it is down, as a full
 * disk or a dead SQLite file would, and goes to the wrapped store otherwise. For the simulator's
 * `defer_store_outage` timeline event and for tests of how the policy host bears a failing store.
 * A refused call changes nothing in the wrapped store (it never reaches it).
 */
import { DeferStoreError } from './defer-memory.js';
import type { DeferRecord, DeferResult, DeferredItem, DeferStore } from './defer-store.js';

/** A call on the store port, by method name. */
export type DeferStoreCall = 'add' | 'pending' | 'claim' | 'finish' | 'get' | 'backlog' | 'close';

/** Why a call on a {@link FailingDeferStore} was refused: the store is down. */
export class DeferStoreOutageError extends DeferStoreError {}

/** Decorates any {@link DeferStore} with an outage switch and an optional per-call failure rule. */
export class FailingDeferStore implements DeferStore {
  readonly #inner: DeferStore;
  readonly #failWhen: ((call: DeferStoreCall) => boolean) | undefined;
  #outages = 0;
  #refused = 0;

  /**
   * @param inner the store that answers while this one is up
   * @param failWhen besides the outage switch, a rule that refuses a call when it returns true
   *   (tests: "the store dies between claim and finish")
   */
  constructor(inner: DeferStore, failWhen?: (call: DeferStoreCall) => boolean) {
    this.#inner = inner;
    this.#failWhen = failWhen;
  }

  /** The wrapped store (to inspect it while this one is down). */
  get inner(): DeferStore {
    return this.#inner;
  }

  /** True while an outage is on (outages nest: two overlapping windows end with the second). */
  get down(): boolean {
    return this.#outages > 0;
  }

  /** Calls refused so far. */
  get refused(): number {
    return this.#refused;
  }

  /** Starts an outage: every call throws until the matching {@link endOutage}. */
  startOutage(): void {
    this.#outages++;
  }

  /** Ends one outage (no effect when none is on). */
  endOutage(): void {
    if (this.#outages > 0) this.#outages--;
  }

  add(item: DeferredItem): void {
    this.#check('add');
    this.#inner.add(item);
  }

  pending(className: string, limit: number): DeferredItem[] {
    this.#check('pending');
    return this.#inner.pending(className, limit);
  }

  claim(id: string, nowMs: number): boolean {
    this.#check('claim');
    return this.#inner.claim(id, nowMs);
  }

  finish(id: string, state: 'done' | 'expired' | 'cancelled', nowMs: number, resultStatus?: number): boolean {
    this.#check('finish');
    return this.#inner.finish(id, state, nowMs, resultStatus);
  }

  finishWithResult(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    nowMs: number,
    result: DeferResult,
  ): boolean {
    this.#check('finish');
    const inner = this.#inner;
    return inner.finishWithResult !== undefined
      ? inner.finishWithResult(id, state, nowMs, result)
      : inner.finish(id, state, nowMs, result.status);
  }

  get(id: string): DeferRecord | undefined {
    this.#check('get');
    return this.#inner.get(id);
  }

  backlog(): ReadonlyMap<string, number> {
    this.#check('backlog');
    return this.#inner.backlog();
  }

  close(): void {
    this.#check('close');
    this.#inner.close();
  }

  #check(call: DeferStoreCall): void {
    if (this.#outages > 0 || this.#failWhen?.(call) === true) {
      this.#refused++;
      throw new DeferStoreOutageError(`the defer store is down (${call} refused)`);
    }
  }
}
