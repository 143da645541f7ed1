/**
 * An attempt's record in the simulator's `RequestRecord` shape, from what the client saw.
 *
 * Fields the client cannot see directly: `decision` is inferred (a refusal is `refuse`, a queue
 * timeout or drain that reports `queued_ms` is `queued`, a non-inference answer is `bypass`,
 * everything else `admit`, because an admitted answer does not say whether it waited);
 * `queue_wait_ms` is the refusal body's `queued_ms` when there is one, else blank; `endpoint` is
 * the `x-sluice-endpoint` response header when a proxy sets it, else blank; `wasted_tokens` is the
 * output received before the client gave up at its deadline.
 */

import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import { KEYLESS_LABEL } from '../../sim/clients/tenants.js';
import { round3 } from '../../sim/run/histogram.js';
import type { Outcome, RequestRecord } from '../../sim/run/records.js';
import type { AttemptResult } from './attempt.js';

/** Header a proxy may set to name the endpoint that served a request. */
export const ENDPOINT_HEADER = 'x-sluice-endpoint';

/** The record of attempt `d` that ended as `r` with `outcome`. */
export function toRecord(
  d: RequestDescriptor,
  r: AttemptResult,
  outcome: Outcome,
  good: boolean,
): RequestRecord {
  const ref = r.refusal;
  const completed = outcome === 'completed';
  const left = outcome === 'cancelled';
  const decision: RequestRecord['decision'] = !d.inference
    ? 'bypass'
    : ref !== undefined && ref.queuedMs !== undefined
      ? 'queued'
      : outcome === 'shed' || outcome === 'timed_out' || outcome === 'drained'
        ? 'refuse'
        : 'admit';
  const first = r.facts.firstTokenAtMs;
  const ttft = first === undefined ? '' : round3(first - d.sentAtMs);
  const e2e = completed ? round3(r.endAtMs - d.sentAtMs) : '';
  const generated = left ? 0 : r.generated;
  return {
    id: d.id,
    logical_id: d.logicalId,
    attempt: d.attempt,
    tenant: d.tenant ?? KEYLESS_LABEL,
    sent_ms: round3(d.sentAtMs),
    protocol: d.protocol,
    stream: d.stream,
    pd: d.pd,
    inference: d.inference,
    prompt_tokens: d.promptTokens,
    output_tokens: d.outputTokens,
    decision,
    outcome,
    status: left || outcome === 'in_system' ? 0 : r.status,
    error: ref?.error ?? '',
    endpoint: r.headers[ENDPOINT_HEADER] ?? '',
    queue_wait_ms: ref?.queuedMs === undefined ? '' : round3(ref.queuedMs),
    ttft_ms: ttft,
    e2e_ms: e2e,
    good,
    generated_tokens: generated,
    wasted_tokens: left ? r.generated : 0,
    // As the simulator computes it (sim/run/requests.ts), from the record's own times.
    tpot_ms: e2e !== '' && ttft !== '' && generated >= 2 ? round3((e2e - ttft) / (generated - 1)) : '',
  };
}
