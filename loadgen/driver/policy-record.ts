/**
 * The simulator's class columns of a policy run's record (`class`, `disposition`, `reason`,
 * `deadline_met`, `useful`; sim/run/records.ts), from what the driver sent and saw.
 *
 * `class` and the deadline are the policy's derivation of the envelope the driver put on the wire
 * (its JWT claims, its route, its deadline header), at the scheduled send, as the proxy derives
 * them (gate/policy/envelope.ts). The disposition is what the answer shows: a `202` the driver
 * followed is `defer` (reason `defer_expired` when the store's wait ran out), a policy refusal
 * `reject` with its reason, an expired class-queue wait `queue` with `queue_WHY`, as the
 * simulator writes them. An admitted answer does not say whether it waited in a queue or was
 * degraded first, so its disposition is left blank rather than guessed.
 */

import { deriveEnvelope, POLICY_REJECT_REASONS, type Policy } from '../../gate/index.js';
import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import { DEFAULT_ROUTE } from '../../sim/run/policy-admission.js';
import type { Outcome, RequestRecord } from '../../sim/run/records.js';
import type { AttemptResult } from './attempt.js';
import { type EnvelopeRules, envelopeClaims, envelopeHeaders } from './envelope.js';

/** The class columns of one record. */
export type PolicyColumns = Pick<
  RequestRecord,
  'class' | 'disposition' | 'reason' | 'deadline_met' | 'useful'
>;

const REJECTS = new Set<string>(POLICY_REJECT_REASONS.map((r) => `policy_${r}`));
const QUEUE_EXIT = 'policy_queue_';

/**
 * The disposition and reason an answer shows: `deferred` (a followed 202), a policy reject, an
 * expired or closed class-queue wait; '' for an answer that does not say.
 */
export function shownDisposition(error: string, deferred: boolean): { disposition: string; reason: string } {
  if (deferred) return { disposition: 'defer', reason: error === 'defer_expired' ? error : '' };
  if (REJECTS.has(error)) return { disposition: 'reject', reason: error.slice('policy_'.length) };
  if (error.startsWith(QUEUE_EXIT))
    return { disposition: 'queue', reason: `queue_${error.slice(QUEUE_EXIT.length)}` };
  return { disposition: '', reason: '' };
}

/**
 * The class columns of attempt `d` that ended as `r` with `outcome` under `policy`.
 * @param path the path the request was sent to ('': not sent, its envelope's route or the default)
 * @param deferred the attempt was answered 202 and followed to its status URL's end
 */
export function policyColumns(
  policy: Policy,
  rules: EnvelopeRules,
  d: RequestDescriptor,
  r: AttemptResult,
  outcome: Outcome,
  path: string,
  deferred: boolean,
): PolicyColumns {
  const e = d.envelope;
  const headers = d.inference ? envelopeHeaders(d, d.sentAtMs, rules) : {};
  const derived = deriveEnvelope(
    policy,
    {
      claims: d.tenant === undefined ? {} : envelopeClaims(d.tenant, e?.className, rules),
      path: path !== '' ? path : (e?.route ?? DEFAULT_ROUTE),
      header: (name) => headers[name],
      cost: { promptTokens: d.promptTokens, maxOutputTokens: d.outputTokens, toolCalls: 0 },
    },
    d.sentAtMs,
  );
  const env = derived.ok ? derived.envelope : undefined;
  const className = env?.className ?? e?.className ?? policy.document.envelope.default_class;
  const deadline = d.inference && env !== undefined ? env.deadlineMs : d.deadlineMs;
  const completed = outcome === 'completed';
  const onTime = deadline === undefined || r.endAtMs <= deadline;
  const shown = d.inference
    ? shownDisposition(r.refusal?.error ?? '', deferred)
    : { disposition: '', reason: '' };
  return {
    class: className,
    ...shown,
    deadline_met: deadline === undefined ? '' : completed && onTime,
    useful: completed && r.end !== 'deadline' && onTime,
  };
}
