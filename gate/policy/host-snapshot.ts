/**
 * The shapes of the policy scorecard's snapshot (plain JSON, stable snake_case keys, for
 * summary.json), and the sum of the core's class scores across policy swaps.
 */

import type { DeferStoreSnapshot } from './host-store.js';
import {
  type ClassScore,
  DISPOSITIONS,
  type DispositionKind,
  REJECT_REASONS,
  type RejectReason,
} from './scorecard.js';

/** One class of the snapshot. */
export interface ClassSnapshot {
  offered: number;
  admitted: number;
  queued: number;
  degraded: number;
  degraded_by_mode: Record<string, number>;
  deferred: number;
  rejected: number;
  rejected_by_reason: Record<RejectReason, number>;
  dispatched: number;
  expired_deadline: number;
  expired_max_age: number;
  removed_by_swap: number;
  closed: number;
  cancelled: number;
  completed: number;
  failed: number;
  useful_on_time: number;
  completed_after_deadline: number;
  completed_after_disconnect: number;
  drained: number;
  defer_expired: number;
  defer_cancelled: number;
  defer_store_failures: number;
  defer_backlog: number;
  queue_depth: number;
  queue_cost_seats: number;
  queue_oldest_ms: number;
  queue_age_ms: { count: number; p50: number; p95: number; max: number; mean: number };
  defer_wait_ms: { count: number; p50: number; p95: number; max: number };
  seats_in_use: number;
  seats_granted: number;
  fairness_share: number;
  starvation_ms_total: number;
  starvation_ms_max: number;
  false_shed: number;
  true_shed: number;
  reserve_admits: number;
  emergency_admits: number;
  estimator: {
    reconciled: number;
    seat_error_sum: number;
    seat_error_abs_sum: number;
    underestimated: number;
    output_token_error_sum: number;
    estimated_tokens: number;
    actual_tokens: number;
    duration_ms: { count: number; p50: number; p95: number; max: number; mean: number };
    seat_ms: number;
    /** The estimator feedback's factor in force (1 when off or before min_samples). */
    correction_factor: number;
    correction_samples: number;
  };
  tenants: Record<string, TenantSnapshot>;
}

/** One tenant of a class in the snapshot. */
export interface TenantSnapshot {
  offered: number;
  admitted: number;
  queued: number;
  degraded: number;
  deferred: number;
  rejected: number;
  dispatched: number;
  cancelled: number;
  completed: number;
  useful_on_time: number;
  seats_granted: number;
  fairness_share: number;
  starvation_ms_total: number;
  starvation_ms_max: number;
  false_shed: number;
}

/** The scorecard as plain JSON, stable snake_case keys (summary.json). */
export interface PolicySnapshot {
  at_ms: number;
  policy_swaps: number;
  classes: Record<string, ClassSnapshot>;
  totals: {
    offered: number;
    admitted: number;
    queued: number;
    degraded: number;
    deferred: number;
    rejected: number;
    cancelled: number;
    completed: number;
    useful_on_time: number;
    false_shed: number;
    queue_depth: number;
    defer_backlog: number;
  };
  retry: {
    intents: number;
    attempts: number;
    retries: number;
    duplicates: number;
    blocked: number;
    /** attempts / intents; 0 with no intent. */
    amplification: number;
  };
  reserve: { seats: number; in_use: number; admits: number };
  emergency: { max_seats: number; in_use: number; uses: number };
  false_shed: { total: number; watching: number; unjudged: number };
  /** How the defer store bore up: calls that threw, refused defers, stopped drains, ends not yet written. */
  defer_store: DeferStoreSnapshot;
  recovery: {
    state: 'healthy' | 'unhealthy' | 'recovering';
    queue_depth_threshold: number;
    unhealthy_periods: number;
    unhealthy_ms: number;
    recoveries: number;
    last_ms: number | null;
    max_ms: number | null;
  };
}

export function zeroKinds(): Record<DispositionKind, number> {
  return { admit: 0, queue: 0, degrade: 0, defer: 0, reject: 0 };
}

export function emptyScore(): ClassScore {
  return {
    offered: 0,
    dispositions: zeroKinds(),
    rejected: Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>,
    reserveAdmits: 0,
    emergencyAdmits: 0,
    estimator: {
      reconciled: 0,
      seatErrorSum: 0,
      seatErrorAbsSum: 0,
      underestimated: 0,
      outputTokenErrorSum: 0,
    },
    tenants: {},
  };
}

function addKinds(
  a: Readonly<Record<DispositionKind, number>>,
  b: Readonly<Record<DispositionKind, number>>,
): Record<DispositionKind, number> {
  const o = zeroKinds();
  for (const k of DISPOSITIONS) o[k] = a[k] + b[k];
  return o;
}

/** The sum of two class scores (a class across policy swaps). */
export function addScores(a: ClassScore, b: ClassScore): ClassScore {
  const tenants: Record<string, Record<DispositionKind, number>> = {};
  for (const [t, k] of Object.entries(a.tenants)) tenants[t] = { ...k };
  for (const [t, k] of Object.entries(b.tenants))
    tenants[t] = tenants[t] ? addKinds(tenants[t], k) : { ...k };
  const rejected = Object.fromEntries(
    REJECT_REASONS.map((r) => [r, a.rejected[r] + b.rejected[r]]),
  ) as Record<RejectReason, number>;
  return {
    offered: a.offered + b.offered,
    dispositions: addKinds(a.dispositions, b.dispositions),
    rejected,
    reserveAdmits: a.reserveAdmits + b.reserveAdmits,
    emergencyAdmits: a.emergencyAdmits + b.emergencyAdmits,
    estimator: {
      reconciled: a.estimator.reconciled + b.estimator.reconciled,
      seatErrorSum: a.estimator.seatErrorSum + b.estimator.seatErrorSum,
      seatErrorAbsSum: a.estimator.seatErrorAbsSum + b.estimator.seatErrorAbsSum,
      underestimated: a.estimator.underestimated + b.estimator.underestimated,
      outputTokenErrorSum: a.estimator.outputTokenErrorSum + b.estimator.outputTokenErrorSum,
    },
    tenants,
  };
}
