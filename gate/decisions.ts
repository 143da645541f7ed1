/**
 * The decision vocabulary: reason names (as the decisions counter labels
 * them), the client-facing errors, and the one table that maps a refusal to
 * its HTTP status, Retry-After rule and connection rule.
 */

/** Reasons, in the order the decisions counter exports them. */
export const DECISION_REASONS = [
  'admitted',
  'capacity_shed',
  'no_healthy_capacity',
  'observe_would_shed',
  'bypass_non_inference',
  'queued',
  'queue_full',
  'queue_timeout',
  'cancelled',
  'drained',
  'observe_would_queue',
  'draining',
  'tenant_share',
] as const;

export type DecisionReason = (typeof DECISION_REASONS)[number];

/** Index of each reason in a counter array. */
export const REASON_INDEX: Readonly<Record<DecisionReason, number>> = Object.fromEntries(
  DECISION_REASONS.map((r, i) => [r, i]),
) as Record<DecisionReason, number>;

/** The `error` field of a refusal body. */
export type AdmissionError =
  | 'admission_capacity'
  | 'admission_tenant_share'
  | 'admission_no_capacity'
  | 'gateway_draining'
  | 'admission_queue_timeout'
  | 'admission_drained';

/** How Retry-After is chosen for a refusal. */
type RetryRule = 'ceiling' | 'mean_wait' | 'drain';

interface RefusalRow {
  status: 429 | 503 | 504;
  error: AdmissionError;
  retry: RetryRule;
  /** Whether the connection may stay open (429s only, and only with a fully buffered body). */
  keepable: boolean;
}

/** The spec's "What the client sees" table, keyed by decision reason. */
export const REFUSALS: Readonly<Partial<Record<DecisionReason, RefusalRow>>> = {
  capacity_shed: { status: 429, error: 'admission_capacity', retry: 'ceiling', keepable: true },
  queue_full: { status: 429, error: 'admission_capacity', retry: 'mean_wait', keepable: true },
  tenant_share: { status: 429, error: 'admission_tenant_share', retry: 'ceiling', keepable: true },
  no_healthy_capacity: { status: 503, error: 'admission_no_capacity', retry: 'ceiling', keepable: false },
  draining: { status: 503, error: 'gateway_draining', retry: 'drain', keepable: false },
  queue_timeout: { status: 504, error: 'admission_queue_timeout', retry: 'mean_wait', keepable: false },
  drained: { status: 503, error: 'admission_drained', retry: 'drain', keepable: false },
};

/** Retry-After for a ceiling refusal, in seconds. */
export const RETRY_AFTER_CEILING_S = 1;
/** Retry-After for a drain, in seconds. */
export const RETRY_AFTER_DRAIN_S = 5;
/** Clamp of the mean-wait Retry-After, in seconds. */
export const RETRY_AFTER_MEAN_WAIT_MIN_S = 1;
export const RETRY_AFTER_MEAN_WAIT_MAX_S = 30;

/** Which ceiling put a request over. */
export type Ceiling = 'service' | 'endpoint' | 'tenant' | 'queue' | 'none';

/** The three admission header values. */
export interface AdmissionHeaderValues {
  /** Executing requests on the pool. */
  inflight: number;
  /** Waiting requests on the pool. */
  queued: number;
  /** The ceiling that refused (or, on admitted responses, the service ceiling in force; 0 = none). */
  limit: number;
}

/** A refusal the host turns into a response. */
export interface Refusal {
  readonly reason: DecisionReason;
  readonly status: 429 | 503 | 504;
  readonly error: AdmissionError;
  /** Retry-After header value, in whole seconds. */
  readonly retryAfterS: number;
  /** Jitter the client should add to Retry-After, in ms (half of Retry-After). */
  readonly jitterHintMs: number;
  /** How long the request waited before it was ended, in ms (timeouts and drains of waiters). */
  readonly queuedMs?: number;
  readonly headers: AdmissionHeaderValues;
  /** True when the host may keep the client connection open after answering. */
  readonly keepConnection: boolean;
  /** The ceiling that refused, where one did. */
  readonly ceiling: Ceiling;
}

/**
 * Builds a refusal from the table.
 * @param meanWaitMs the pool's recent mean queue wait, in ms (NaN when nobody has left the queue yet)
 * @param bodyBuffered whether the request body was fully read before the decision
 * @param queuedMs how long the request waited, for a refusal that ends a wait
 * @param queueBound a refusal the queue made (a tenant's share of the queue full): Retry-After is the mean wait
 */
export function makeRefusal(
  reason: DecisionReason,
  headers: AdmissionHeaderValues,
  meanWaitMs: number,
  bodyBuffered: boolean,
  ceiling: Ceiling,
  queuedMs?: number,
  queueBound = false,
): Refusal {
  const row = REFUSALS[reason];
  if (!row) throw new Error(`internal: ${reason} is not a refusal`);
  const rule: RetryRule = queueBound ? 'mean_wait' : row.retry;
  const retryAfterS =
    rule === 'ceiling'
      ? RETRY_AFTER_CEILING_S
      : rule === 'drain'
        ? RETRY_AFTER_DRAIN_S
        : clamp(
            Number.isFinite(meanWaitMs) ? Math.ceil(meanWaitMs / 1000) : RETRY_AFTER_MEAN_WAIT_MIN_S,
            RETRY_AFTER_MEAN_WAIT_MIN_S,
            RETRY_AFTER_MEAN_WAIT_MAX_S,
          );
  const r: Refusal = {
    reason,
    status: row.status,
    error: row.error,
    retryAfterS,
    jitterHintMs: retryAfterS * 500,
    headers,
    keepConnection: row.keepable && bodyBuffered,
    ceiling,
    ...(queuedMs === undefined ? {} : { queuedMs }),
  };
  return r;
}

/** The JSON body of a refusal response. */
export function refusalBody(r: Refusal): {
  error: AdmissionError;
  retry_after: number;
  jitter_hint_ms: number;
  queued_ms?: number;
} {
  return {
    error: r.error,
    retry_after: r.retryAfterS,
    jitter_hint_ms: r.jitterHintMs,
    ...(r.queuedMs === undefined ? {} : { queued_ms: r.queuedMs }),
  };
}

/** Header names of the admission headers, as sent on the wire. */
export const ADMISSION_HEADER_NAMES = {
  inflight: 'X-Loxilb-Admission-Inflight',
  queued: 'X-Loxilb-Admission-Queued',
  limit: 'X-Loxilb-Admission-Limit',
} as const;

/** The admission headers as a name → value map. */
export function admissionHeaders(v: AdmissionHeaderValues): Record<string, string> {
  return {
    [ADMISSION_HEADER_NAMES.inflight]: String(v.inflight),
    [ADMISSION_HEADER_NAMES.queued]: String(v.queued),
    [ADMISSION_HEADER_NAMES.limit]: String(v.limit),
  };
}

/** Every response header of a refusal: Retry-After, the admission headers, and Connection when it must close. */
export function refusalHeaders(r: Refusal): Record<string, string> {
  return {
    'Retry-After': String(r.retryAfterS),
    ...admissionHeaders(r.headers),
    ...(r.keepConnection ? {} : { Connection: 'close' }),
  };
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi);
}
