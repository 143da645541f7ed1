/**
 * The port of the defer disposition's store. The policy host (gate side) talks to this and
 * nothing else; the simulator backs it with memory, `sluice proxy --defer-db FILE` with SQLite.
 * Calls are synchronous: a store returns only once the change is durable (for SQLite, committed
 * in WAL mode), so a 202 is never sent for an item a crash could lose.
 *
 * An item moves pending → draining → done | expired | cancelled. `draining` means fed back to the
 * gate and not yet finished; a store reopened after a crash turns every `draining` item back into
 * `pending` (at-least-once feed-back; the item's idempotency key lets the retry budget recognise a
 * second completion). No item is ever lost or listed twice as pending.
 */

/** Where a deferred item stands. */
export type DeferState = 'pending' | 'draining' | 'done' | 'expired' | 'cancelled';

/** One deferred request, as the host stores it. */
export interface DeferredItem {
  /** Store-unique, URL-safe id (the status id returned to the client). */
  readonly id: string;
  readonly className: string;
  readonly tenant: string;
  /** When it was deferred, ms on the gate's clock (wall clock for the proxy). */
  readonly deferredAtMs: number;
  /** Absolute deadline, ms on the same clock; past it the item expires instead of draining. */
  readonly deadlineMs: number;
  readonly seats: number;
  readonly idempotencyKey?: string;
  /** The host's own encoding of the request (method, target, headers, body); opaque here. */
  readonly payload: Uint8Array;
}

/** What the status endpoint tells of an item. */
export interface DeferRecord {
  readonly item: DeferredItem;
  readonly state: DeferState;
  /** Set once done: the status the backend (or the gate) answered with. */
  readonly resultStatus?: number;
  /** ms on the store's clock when the state last changed. */
  readonly updatedAtMs: number;
}

/** A finished item's result as the host hands it over: the backend's status, body (bytes) and content type. */
export interface DeferResult {
  readonly status?: number;
  readonly body?: Uint8Array;
  readonly contentType?: string;
}

/** A durable (or, in the simulator, in-memory) defer queue. */
export interface DeferStore {
  /** Stores a new pending item; durable when it returns. Throws when the id exists. */
  add(item: DeferredItem): void;
  /** Up to `limit` pending items of `className`, oldest first, without changing them. */
  pending(className: string, limit: number): DeferredItem[];
  /** pending → draining. @returns false when the item is not pending (already claimed, ended or unknown) */
  claim(id: string, nowMs: number): boolean;
  /** draining|pending → done / expired / cancelled. @returns false when already ended or unknown */
  finish(id: string, state: 'done' | 'expired' | 'cancelled', nowMs: number, resultStatus?: number): boolean;
  /**
   * {@link finish} keeping the backend's answer (status, body, content type) for the status
   * endpoint; a store may keep only part of it (e.g. no body past its size bound). Optional: the
   * host falls back to {@link finish} with the status when a store lacks it.
   */
  finishWithResult?(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    nowMs: number,
    result: DeferResult,
  ): boolean;
  /** The item and its state, or undefined. */
  get(id: string): DeferRecord | undefined;
  /** Pending items per class (the backlog). */
  backlog(): ReadonlyMap<string, number>;
  close(): void;
}
