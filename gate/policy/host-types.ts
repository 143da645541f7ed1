/**
 * The public shapes of the policy host (gate/policy/host.ts): leases, completions, admissions,
 * the host's callbacks and options, and the report of a swap.
 */
import type { Clock } from '../clock.js';
import type { Policy } from './compile.js';
import type { ActualUse, Conditions, RetryAfter } from './decide.js';
import type { DeferredItem, DeferStore } from './defer-store.js';
import type { PolicyWaiter } from './host-queue.js';
import type { DegradeOption } from './schema.js';
import type { RejectReason } from './scorecard.js';
import type { Lane } from './seats.js';

/** Why a queued request left without a seat. */
export type QueueExit = 'deadline' | 'max_age' | 'class_removed' | 'closed';

/** How a lease got its seats. */
export type LeaseVia = 'admit' | 'queue' | 'degrade' | 'drain';

/** Admitted work (admit, dispatched from the queue, degraded, or a deferred item fed back); end it with `PolicyGate.release`. */
export interface PolicyLease<C> {
  readonly ctx: C;
  readonly className: string;
  readonly tenant: string;
  /** Seats held; 0 for a fallback pool (its seats are not this policy's). */
  readonly seats: number;
  /** `pool` for a fallback pool. */
  readonly lane: Lane | 'pool';
  readonly via: LeaseVia;
  /** The degraded mode it runs in, or undefined. */
  readonly mode: DegradeOption | undefined;
  /** The max output tokens to send (reduced by a max_tokens degrade); undefined for a deferred item fed back (the request's own). */
  readonly maxOutputTokens: number | undefined;
  /** Absolute deadline, ms on the gate's clock (propagate the rest to the backend). */
  readonly deadlineMs: number;
  /** When it got its seats, ms. */
  readonly admittedAtMs: number;
  /** When it arrived at the gate (or was deferred), ms. */
  readonly arrivedAtMs: number;
  /** The store id of a deferred item fed back. */
  readonly deferId: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly released: boolean;
}

/** What the host reports when admitted work ends. */
export interface Completion {
  /** completed: the backend answered; failed: it did not (error, timeout); cancelled: the client went away first. */
  readonly outcome: 'completed' | 'failed' | 'cancelled';
  /** Whether the answer was still wanted: the client still connected (default: true unless cancelled). */
  readonly clientConnected?: boolean;
  /** Whether the answer was useful to the caller (default: completed). Counted useful on time only before the deadline. */
  readonly useful?: boolean;
  /** Actual tokens (and tool calls) used, for the estimator's error and feedback. */
  readonly actual?: ActualUse;
  /** Status answered (stored with a deferred item's result). */
  readonly status?: number;
  /**
   * A deferred item's answer to keep for its status endpoint (body bytes, content type); handed
   * to the store's `finishWithResult` with {@link status}. Ignored for live work.
   */
  readonly result?: { readonly body?: Uint8Array; readonly contentType?: string };
}

/** The one disposition of a submitted request, as the host acts on it. */
export type PolicyAdmission<C> =
  | { readonly kind: 'admit'; readonly lease: PolicyLease<C> }
  | {
      readonly kind: 'queue';
      readonly waiter: PolicyWaiter<C>;
      /** From the class's recent service rate; undefined while unknown. */
      readonly expectedWaitMs: number | undefined;
    }
  | { readonly kind: 'degrade'; readonly mode: DegradeOption; readonly lease: PolicyLease<C> }
  | { readonly kind: 'defer'; readonly item: DeferredItem; readonly backlog: number }
  | {
      readonly kind: 'reject';
      readonly reason: RejectReason;
      readonly retryAfter: RetryAfter;
      readonly detail: string;
    };

/** The host's side of a `PolicyGate`: called synchronously, never re-entered for one request. */
export interface PolicyGateEvents<C> {
  /** A queued request (or a deferred item fed back) got its seats: run it, then release the lease. */
  onDispatch(lease: PolicyLease<C>): void;
  /** A queued request left without a seat (answer it: deadline, max_age, class_removed by a swap, closed). */
  onExpire(ctx: C, why: QueueExit): void;
  /**
   * A deferred item is fed back with seats: return the context to run it with (decoded from its
   * payload), or undefined when it cannot be run (the item ends `cancelled`, its seats return).
   */
  onDrain(item: DeferredItem): C | undefined;
  /** A deferred item passed its deadline in the store (ended `expired`). */
  onDeferExpire?(item: DeferredItem): void;
  /** The host's encoding of a request being deferred (its store payload); empty when absent. */
  deferPayload?(ctx: C): Uint8Array;
}

/** Options of a `PolicyGate`. */
export interface PolicyGateOptions<C> {
  readonly policy: Policy;
  readonly clock: Clock;
  readonly events: PolicyGateEvents<C>;
  /** Where deferred requests wait (default: a new `MemoryDeferStore`); pending items in it are drained. */
  readonly store?: DeferStore;
  /** The system's conditions at each decision, dispatch and drain step (default: healthy). */
  readonly conditions?: () => Conditions;
  /** A store-unique id for a new deferred item (default: `d` + clock ms + a counter, base 36). */
  readonly deferId?: () => string;
  /** Period of the drain loop while items wait in the store, ms (default 100). */
  readonly drainPeriodMs?: number;
}

/** What a policy swap carried over. */
export interface SwapReport {
  /** Leases whose seats were re-taken in the new core by class name. */
  readonly carriedLeases: number;
  /** Leases whose class the new policy lacks: their seats are held outside every class until released. */
  readonly unclassedLeases: number;
  readonly carriedWaiters: number;
  /** Waiters whose class the new policy lacks: they left with `class_removed`. */
  readonly removedWaiters: number;
}
