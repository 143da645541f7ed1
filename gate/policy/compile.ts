/**
 * A validated policy document compiled for the hot path: classes as an array in declaration order,
 * each with its derived limits (floor, lendable seats, tenant quota) and estimator parameters.
 */
import type { EstimatorParams } from './estimator.js';
import type { DegradeOption, PolicyDocument } from './schema.js';

/** One workload class, compiled. */
export interface PolicyClass {
  readonly index: number;
  readonly name: string;
  readonly priority: number;
  /** Seats this class can always reach when nobody borrows them. */
  readonly guaranteed: number;
  /** Of those, seats other classes may borrow while they are idle: round(guaranteed × lendable_pct / 100). */
  readonly lendable: number;
  /** guaranteed − lendable: never lent, always reachable by the class itself. */
  readonly floor: number;
  readonly borrowAllowed: boolean;
  /** Most seats held above `guaranteed` at once (Infinity when unbounded). */
  readonly borrowLimit: number;
  /** Most seats one tenant may hold in this class (Infinity at 100 %); a tenant holding none always fits. */
  readonly tenantQuota: number;
  readonly queue: { readonly maxCount: number; readonly maxAgeMs: number; readonly maxCostSeats: number };
  readonly deadline: { readonly defaultMs: number; readonly clientMayShorten: boolean };
  readonly estimator: EstimatorParams;
  readonly dependsOn: readonly string[];
  readonly degrade: readonly DegradeOption[];
  readonly defer?: { readonly maxBacklog: number; readonly drainPerS: number };
}

/** A compiled policy. */
export interface Policy {
  readonly document: PolicyDocument;
  readonly capacity: number;
  readonly reserveSeats: number;
  /** capacity − reserve: seats of all non-reserve traffic. */
  readonly usable: number;
  readonly classes: readonly PolicyClass[];
  readonly byName: ReadonlyMap<string, PolicyClass>;
  readonly emergency?: {
    readonly maxSeats: number;
    readonly claim?: { readonly name: string; readonly equals: string };
    readonly tenants: ReadonlySet<string>;
  };
  readonly serviceRateWindowMs: number;
  /** Recovery ends once at most this many requests wait in the class queues and none is deferred. */
  readonly recoveryQueueDepth: number;
  /** The estimator's feedback rule, when enabled (per class, from reconciled requests). */
  readonly estimatorFeedback?: {
    readonly alpha: number;
    readonly minFactor: number;
    readonly maxFactor: number;
    readonly minSamples: number;
  };
  readonly retry: {
    readonly idempotencyHeader: string;
    readonly budgetPerIntent: number;
    readonly rememberMs: number;
    readonly maxIntents: number;
  };
}

/** Compiles a validated document (see parsePolicyDocument); the result is frozen. */
export function compilePolicy(doc: PolicyDocument): Policy {
  const classes: PolicyClass[] = Object.entries(doc.classes).map(([name, c], index) => {
    const lendable = Math.round((c.guaranteed_seats * c.lendable_pct) / 100);
    const e = { ...doc.estimator, ...c.estimator };
    const pc: PolicyClass = {
      index,
      name,
      priority: c.priority,
      guaranteed: c.guaranteed_seats,
      lendable,
      floor: c.guaranteed_seats - lendable,
      borrowAllowed: c.borrow.allowed,
      borrowLimit: c.borrow.allowed ? (c.borrow.max_seats ?? Number.POSITIVE_INFINITY) : 0,
      tenantQuota:
        c.tenant_max_share_pct >= 100
          ? Number.POSITIVE_INFINITY
          : Math.max(1, Math.floor((c.guaranteed_seats * c.tenant_max_share_pct) / 100)),
      queue: Object.freeze({
        maxCount: c.queue.max_count,
        maxAgeMs: c.queue.max_age_ms,
        maxCostSeats: c.queue.max_cost_seats,
      }),
      deadline: Object.freeze({
        defaultMs: c.deadline.default_ms,
        clientMayShorten: c.deadline.client_may_shorten,
      }),
      estimator: Object.freeze({
        promptTokensPerSeat: e.prompt_tokens_per_seat,
        outputTokensPerSeat: e.output_tokens_per_seat,
        seatsPerToolCall: e.seats_per_tool_call,
        minSeats: e.min_seats,
        maxSeats: e.max_seats ?? doc.capacity_seats - doc.reserve.seats,
      }),
      dependsOn: Object.freeze([...c.depends_on]),
      degrade: Object.freeze(c.degrade.map((d) => Object.freeze({ ...d }))),
      ...(c.defer?.enabled
        ? { defer: Object.freeze({ maxBacklog: c.defer.max_backlog, drainPerS: c.defer.drain_per_s }) }
        : {}),
    };
    return Object.freeze(pc);
  });
  const em = doc.emergency;
  const policy: Policy = {
    document: doc,
    capacity: doc.capacity_seats,
    reserveSeats: doc.reserve.seats,
    usable: doc.capacity_seats - doc.reserve.seats,
    classes: Object.freeze(classes),
    byName: new Map(classes.map((c) => [c.name, c])),
    ...(em
      ? {
          emergency: Object.freeze({
            maxSeats: em.max_seats,
            ...(em.eligible.claim ? { claim: { ...em.eligible.claim } } : {}),
            tenants: new Set(em.eligible.tenants),
          }),
        }
      : {}),
    serviceRateWindowMs: doc.service_rate_window_ms,
    recoveryQueueDepth: doc.recovery.queue_depth,
    ...(doc.estimator.feedback?.enabled
      ? {
          estimatorFeedback: Object.freeze({
            alpha: doc.estimator.feedback.alpha,
            minFactor: doc.estimator.feedback.min_factor,
            maxFactor: doc.estimator.feedback.max_factor,
            minSamples: doc.estimator.feedback.min_samples,
          }),
        }
      : {}),
    retry: Object.freeze({
      idempotencyHeader: doc.retry.idempotency_header,
      budgetPerIntent: doc.retry.budget_per_intent,
      rememberMs: doc.retry.remember_ms,
      maxIntents: doc.retry.max_intents,
    }),
  };
  return Object.freeze(policy);
}
