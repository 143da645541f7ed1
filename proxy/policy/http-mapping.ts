/**
 * The policy's refusals as HTTP answers. RFC 6585 gives 429 to a caller or quota that is
 * constrained; a service-wide shortage is 503; a deadline that cannot be met is 504. A
 * `Retry-After` is sent only when the core could justify one (a known service rate, a circuit's
 * retry time); otherwise the body says recovery is unknown.
 */
import type { PolicyRejectReason, PolicyRetryAfter } from '../../gate/index.js';

/** An answer of the proxy for a policy disposition. */
export interface PolicyAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Record<string, unknown>;
  /** The body's `error`, for the decision log. */
  readonly error: string;
}

/** Status of each reject reason. */
export const REJECT_STATUS: Readonly<Record<PolicyRejectReason, number>> = {
  tenant_quota: 429,
  retry_budget: 429,
  class_capacity: 503,
  queue_full: 503,
  dependency_open: 503,
  deadline_impossible: 504,
  duplicate_intent: 409,
};

/** The answer to a rejected request. */
export function rejectAnswer(
  reason: PolicyRejectReason,
  retryAfter: PolicyRetryAfter,
  detail: string,
  className: string,
): PolicyAnswer {
  const known = typeof retryAfter === 'number';
  return {
    status: REJECT_STATUS[reason],
    headers: known ? { 'Retry-After': String(retryAfter) } : {},
    body: {
      error: `policy_${reason}`,
      reason,
      class: className,
      message: detail,
      retry_after_s: known ? retryAfter : null,
      recovery: known ? 'estimated' : 'unknown',
    },
    error: `policy_${reason}`,
  };
}

/** Why a request waiting in the policy's queue left without a seat. */
export type QueueExitWhy = 'deadline' | 'max_age' | 'class_removed' | 'closed';

/** The answer to a request that left the policy's queue without a seat. */
export function queueExitAnswer(why: QueueExitWhy, className: string, waitedMs: number): PolicyAnswer {
  const status = why === 'deadline' || why === 'max_age' ? 504 : 503;
  const message = {
    deadline: 'the deadline passed while the request waited in its class queue',
    max_age: "the request waited its class queue's age bound",
    class_removed: 'a policy swap removed the class the request waited in',
    closed: 'the proxy is shutting down',
  }[why];
  return {
    status,
    headers: {},
    body: {
      error: `policy_queue_${why}`,
      reason: why,
      class: className,
      message,
      queued_ms: Math.round(waitedMs),
      recovery: 'unknown',
    },
    error: `policy_queue_${why}`,
  };
}
