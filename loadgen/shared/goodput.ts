/**
 * How an attempt ended, from what the client saw, and whether it was good. One definition for the
 * Node driver and the k6 script:
 *
 * **good** = the response completed (2xx, the stream ended with `[DONE]` or the body was whole) with
 * the full output (max_tokens generated, or `finish_reason: length`), its first token came within
 * the TTFT objective of the logical request's first send, and it finished by the client's deadline.
 *
 * Outcomes use the simulator's words: refusals (429; 503 from the gate; a policy reject of any
 * status) are `shed`, a queue timeout (504 `admission_queue_timeout`, or SMG's 503 of that code;
 * a policy queue's or defer store's wait that ran out) is `timed_out`, a drain of waiters is
 * `drained`, the client's own abort at its deadline is `cancelled`, anything else that is not a
 * whole answer (transport errors, other statuses, a stream cut short) is `failed`. Pure.
 */
import type { Outcome } from '../../sim/run/records.js';

/** What the client observed of one attempt. Times in ms on one clock. */
export interface AttemptObservation {
  inference: boolean;
  /** HTTP status; 0 when no response head arrived. */
  status: number;
  /** `error` of a refusal (body or header), '' when none. */
  error: string;
  /** The client aborted the attempt at its deadline. */
  clientLeft: boolean;
  /** The body ended properly: `[DONE]` for a stream, a whole JSON for a plain answer. */
  finished: boolean;
  /** Output tokens received (usage, or counted). */
  generatedTokens: number;
  /** Output tokens asked for (max_tokens). */
  expectedTokens: number;
  /** `finish_reason` of the answer, '' when none. */
  finishReason: string;
  /** First token, minus the logical request's first (scheduled) send; undefined without one. */
  ttftFromFirstSendMs: number | undefined;
  /** When the attempt ended. */
  endAtMs: number;
  /** Absolute deadline of the logical request; undefined for none. */
  deadlineAtMs: number | undefined;
  /** TTFT objective, ms; undefined for none. */
  ttftSloMs: number | undefined;
}

/** The verdict on an attempt. */
export interface Verdict {
  outcome: Exclude<Outcome, 'in_system'>;
  good: boolean;
}

/**
 * Refusal codes the gate (and SMG) answer with, by the outcome they mean; and the policy layer's
 * (`sluice proxy --policy`, proxy/policy/http-mapping.ts), mapped as the simulator records them
 * (sim/run/policy-admission.ts): a reject is `shed` whatever its status (429, 503, 504, 409), a
 * wait in the class queue or the defer store that ran out is `timed_out`, a queue closed under
 * it (a swap removed the class, the proxy stopping) is `drained`.
 */
const TIMEOUT_ERRORS = new Set([
  'admission_queue_timeout',
  'policy_queue_deadline',
  'policy_queue_max_age',
  'defer_expired',
]);
const DRAIN_ERRORS = new Set(['admission_drained', 'policy_queue_class_removed', 'policy_queue_closed']);
const SHED_503_ERRORS = new Set(['admission_no_capacity', 'gateway_draining']);
const POLICY_REJECTS = new Set([
  'policy_tenant_quota',
  'policy_retry_budget',
  'policy_class_capacity',
  'policy_queue_full',
  'policy_dependency_open',
  'policy_deadline_impossible',
  'policy_duplicate_intent',
]);

/** The whole output arrived: as many tokens as asked, or the engine said it stopped at the length. */
export function fullOutput(
  o: Pick<AttemptObservation, 'generatedTokens' | 'expectedTokens' | 'finishReason'>,
): boolean {
  return o.finishReason === 'length' || o.generatedTokens >= o.expectedTokens;
}

/** How an attempt ended (see the module doc). */
export function attemptOutcome(o: AttemptObservation): Verdict['outcome'] {
  if (o.clientLeft) return 'cancelled';
  const s = o.status;
  if (s === 0) return 'failed';
  if (s >= 200 && s < 300) {
    if (!o.finished) return 'failed';
    return !o.inference || fullOutput(o) ? 'completed' : 'failed';
  }
  if (TIMEOUT_ERRORS.has(o.error) && (s === 504 || s === 503)) return 'timed_out';
  if (DRAIN_ERRORS.has(o.error)) return 'drained';
  if (POLICY_REJECTS.has(o.error)) return 'shed';
  if (s === 429) return 'shed';
  if (s === 503 && SHED_503_ERRORS.has(o.error)) return 'shed';
  return 'failed';
}

/** The verdict: outcome and goodness (see the module doc). */
export function classifyAttempt(o: AttemptObservation): Verdict {
  const outcome = attemptOutcome(o);
  const good =
    outcome === 'completed' &&
    o.inference &&
    (o.ttftSloMs === undefined ||
      (o.ttftFromFirstSendMs !== undefined && o.ttftFromFirstSendMs <= o.ttftSloMs)) &&
    (o.deadlineAtMs === undefined || o.endAtMs <= o.deadlineAtMs);
  return { outcome, good };
}

/** What a refusal response says. */
export interface RefusalInfo {
  /** `error` (a string, or `error.code` of an OpenAI-style error object, or `X-SMG-Error-Code`), '' when none. */
  error: string;
  /** Retry-After in seconds; undefined when absent or unreadable. */
  retryAfterSec: number | undefined;
  /** `jitter_hint_ms` of the body; undefined when absent. */
  jitterHintMs: number | undefined;
  /** `queued_ms` of the body: how long it waited in the gate's queue. */
  queuedMs: number | undefined;
}

/**
 * Retry-After as seconds: delta-seconds, or an HTTP date relative to `nowEpochMs`.
 * @returns undefined when absent or unreadable
 */
export function parseRetryAfter(value: string | undefined | null, nowEpochMs = 0): number | undefined {
  if (value === undefined || value === null) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, (at - nowEpochMs) / 1000) : undefined;
}

/**
 * Reads a refusal: the body (JSON, possibly not) and the headers (lower-case names).
 */
export function parseRefusal(
  body: string,
  headers: Readonly<Record<string, string | undefined>>,
  nowEpochMs = 0,
): RefusalInfo {
  let obj: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      obj = parsed as Record<string, unknown>;
  } catch {
    // not JSON: a proxy's own page
  }
  const e = obj.error;
  let error = '';
  if (typeof e === 'string') error = e;
  else if (e !== null && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string')
    error = (e as { code: string }).code;
  if (error === '') error = headers['x-smg-error-code'] ?? '';
  const num = (k: string): number | undefined => {
    const v = obj[k];
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };
  const header = parseRetryAfter(headers['retry-after'], nowEpochMs);
  return {
    error,
    retryAfterSec: header ?? num('retry_after'),
    jitterHintMs: num('jitter_hint_ms'),
    queuedMs: num('queued_ms'),
  };
}

/** The gate's admission headers (lower-case names), when present. */
export interface AdmissionGauges {
  inflight: number | undefined;
  queued: number | undefined;
  limit: number | undefined;
}

/** Reads `X-Loxilb-Admission-Inflight/-Queued/-Limit` (lower-case names). */
export function admissionGauges(headers: Readonly<Record<string, string | undefined>>): AdmissionGauges {
  const n = (k: string): number | undefined => {
    const v = headers[k];
    if (v === undefined) return undefined;
    const x = Number(v);
    return Number.isFinite(x) ? x : undefined;
  };
  return {
    inflight: n('x-loxilb-admission-inflight'),
    queued: n('x-loxilb-admission-queued'),
    limit: n('x-loxilb-admission-limit'),
  };
}

/** The gate's decision reason (the decisions counter's label) a client-seen answer stands for, or undefined. */
export function decisionReasonOf(status: number, error: string, inference: boolean): string | undefined {
  if (status >= 200 && status < 300) return inference ? 'admitted' : 'bypass_non_inference';
  switch (error) {
    case 'admission_capacity':
    case 'admission_queue_full':
      return status === 429 ? 'capacity_shed' : undefined;
    case 'admission_tenant_share':
      return 'tenant_share';
    case 'admission_no_capacity':
      return 'no_healthy_capacity';
    case 'gateway_draining':
      return 'draining';
    case 'admission_queue_timeout':
      return 'queue_timeout';
    case 'admission_drained':
      return 'drained';
    default:
      return undefined;
  }
}
