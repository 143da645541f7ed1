/**
 * The request-outcome vocabulary and the decision-log record, in one place: the proxy writes
 * the JSONL decision log in this shape (`proxy/decision-log.ts`, schema in proxy/README.md),
 * the simulator reads it back as a trace (`decision-log.ts`), and the simulator's per-request
 * records end with the same outcomes (`sim/run/records.ts`). A leaf module (types and constants,
 * no imports), so the proxy takes its record shape from here without depending on the simulator,
 * and the k6 build, which type-checks the run records, carries nothing else.
 */

/**
 * The gate's first decision for a request as the decision log writes it: the simulator's
 * `admit`, `queued`, `refuse` and `bypass`, plus the proxy's `unauthorized` (401, before the
 * gate) and `rejected` (refused by the proxy before the gate: body too large, too slow, ...).
 */
export const LOG_DECISIONS = ['admit', 'queued', 'refuse', 'bypass', 'unauthorized', 'rejected'] as const;

export type LogDecision = (typeof LOG_DECISIONS)[number];

/** How a request ended, in the decision log and in the simulator's records. */
export type RequestOutcome =
  /** The response completed. */
  | 'completed'
  /** Refused by the gate (429/503) before reaching an engine. */
  | 'shed'
  /** Waited the whole queue window (504). */
  | 'timed_out'
  /** The client left (deadline) while queued or executing. */
  | 'cancelled'
  /** Ended while waiting by a drain or a rule re-create (503 admission_drained). */
  | 'drained'
  /** The engine refused it (prompt too long) or it was lost with a restarted engine. */
  | 'failed';

/** One decision-log line. Times in ms; null where not applicable. */
export interface DecisionRecord {
  /** Arrival time, ISO 8601 UTC with ms. */
  time: string;
  /** `externalIP:port` of the rule (or `smg`). */
  service: string;
  /** Tenant id from the credential; null for keyless traffic. */
  tenant: string | null;
  decision: LogDecision;
  /** The gate's reason (admitted, capacity_shed, queue_full, queue_timeout, drained, draining, tenant_share, no_healthy_capacity, bypass_non_inference, observe_would_shed, observe_would_queue) or a proxy one (unauthorized, body_too_large, body_timeout, proxy_body_memory_full, backend_error, backend_timeout, endpoint_down, no_endpoint). */
  reason: string;
  outcome: RequestOutcome;
  /** HTTP status sent to the client; 0 when it left before any answer. */
  status: number;
  /** `error` of the refusal body, else null. */
  error: string | null;
  method: string;
  path: string;
  protocol: 'http1' | 'h2';
  /** Endpoint `IP:port` the request went to, else null. */
  endpoint: string | null;
  /** Time spent waiting in the gate's queue; null when it never waited. */
  queued_ms: number | null;
  /** Admission → first SSE `data:` event; null for unstreamed responses. */
  ttft_ms: number | null;
  /** Arrival → end of the exchange. */
  duration_ms: number;
  /** From the response's `usage`, when the backend sent one; else null. */
  prompt_tokens: number | null;
  output_tokens: number | null;
  /** `sec.ai.deny` on a non-admit decision (refused, rejected, unauthorized, or a wait that ended refused); absent otherwise. */
  event?: 'sec.ai.deny';
  /** On a sec.ai.deny record: the `model` of the request body when it was read before the decision, else null. */
  model?: string | null;
}
