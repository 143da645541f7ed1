/**
 * The class columns of a policy load run's record (policy-record.ts): the disposition the answer
 * shows (a followed 202 is `defer`, an expired one with `defer_expired`; a policy refusal
 * `reject` with its reason; an expired class-queue wait `queue`), blank where the answer does
 * not say; the class and deadline the proxy derives from the envelope the driver sent.
 */
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../gate/index.js';
import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import type { EnvelopeConfig } from '../../sim/clients/tenants.js';
import { emptyStreamFacts } from '../shared/sse.js';
import type { AttemptResult } from './attempt.js';
import { envelopeRules } from './envelope.js';
import { policyColumns, shownDisposition } from './policy-record.js';

const POLICY = `version: 1
capacity_seats: 8
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 2 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 4
    queue: { max_count: 4, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 8000 }
  batch:
    priority: 10
    guaranteed_seats: 4
    queue: { max_count: 4, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 600000, client_may_shorten: true }
    defer: { enabled: true, max_backlog: 10, drain_per_s: 1 }
envelope:
  class_claim: tier
  routes:
    - { path_prefix: /v1/batches, class: batch }
  default_class: interactive
  client_header: { deadline_ms: x-left-ms }
`;

const policy = parsePolicy(POLICY, 'policy.yaml');
const rules = envelopeRules(policy);

function descriptor(envelope: EnvelopeConfig | undefined, sentAtMs = 1000): RequestDescriptor {
  return {
    id: 1,
    logicalId: 1,
    attempt: 1,
    tenant: 't',
    promptTokens: 100,
    outputTokens: 20,
    stream: false,
    protocol: 'http1',
    pd: false,
    inference: true,
    sentAtMs,
    firstSentAtMs: sentAtMs,
    deadlineMs: undefined,
    ttftSloMs: undefined,
    ...(envelope === undefined ? {} : { envelope }),
  };
}

function result(status: number, endAtMs: number, error?: string): AttemptResult {
  return {
    end: 'response',
    status,
    headers: {},
    headAtMs: endAtMs,
    endAtMs,
    facts: emptyStreamFacts(),
    generated: 0,
    finished: true,
    refusal:
      error === undefined
        ? undefined
        : { error, retryAfterSec: undefined, jitterHintMs: undefined, queuedMs: undefined },
    gauges: { inflight: undefined, queued: undefined, limit: undefined },
    error: '',
  };
}

describe('the disposition an answer shows', () => {
  it('names a followed 202 defer, with defer_expired when its wait ran out', () => {
    expect(shownDisposition('', true)).toEqual({ disposition: 'defer', reason: '' });
    expect(shownDisposition('defer_expired', true)).toEqual({
      disposition: 'defer',
      reason: 'defer_expired',
    });
    // A deferred item whose replay was refused keeps its disposition; the error column says why.
    expect(shownDisposition('backend_timeout', true)).toEqual({ disposition: 'defer', reason: '' });
  });

  it("names the policy's rejects and queue exits as the simulator writes them", () => {
    expect(shownDisposition('policy_tenant_quota', false)).toEqual({
      disposition: 'reject',
      reason: 'tenant_quota',
    });
    expect(shownDisposition('policy_class_capacity', false)).toEqual({
      disposition: 'reject',
      reason: 'class_capacity',
    });
    expect(shownDisposition('policy_queue_deadline', false)).toEqual({
      disposition: 'queue',
      reason: 'queue_deadline',
    });
    expect(shownDisposition('policy_queue_max_age', false)).toEqual({
      disposition: 'queue',
      reason: 'queue_max_age',
    });
  });

  it('leaves blank what an answer does not say (admitted, maybe after a queue wait or a degrade)', () => {
    expect(shownDisposition('', false)).toEqual({ disposition: '', reason: '' });
    expect(shownDisposition('admission_queue_full', false)).toEqual({ disposition: '', reason: '' });
  });
});

describe('the class columns of a record', () => {
  it("takes the class and deadline the proxy derives from the driver's envelope", () => {
    // Batch by claim, deadline shortened by the header to 2 s after the send at 1 s.
    const d = descriptor({ className: 'batch', deadlineMs: 2000 });
    expect(
      policyColumns(policy, rules, d, result(200, 2900), 'completed', '/v1/chat/completions', true),
    ).toEqual({
      class: 'batch',
      disposition: 'defer',
      reason: '',
      deadline_met: true,
      useful: true,
    });
    // Seen done after that deadline: completed, not on time.
    expect(
      policyColumns(policy, rules, d, result(200, 3100), 'completed', '/v1/chat/completions', true),
    ).toEqual({
      class: 'batch',
      disposition: 'defer',
      reason: '',
      deadline_met: false,
      useful: false,
    });
  });

  it('uses the route, else the default class and its deadline, when no class is claimed', () => {
    const byRoute = policyColumns(
      policy,
      rules,
      descriptor(undefined),
      result(200, 5000),
      'completed',
      '/v1/batches/x',
      false,
    );
    expect(byRoute.class).toBe('batch');
    const byDefault = policyColumns(
      policy,
      rules,
      descriptor(undefined),
      result(200, 9500),
      'completed',
      '',
      false,
    );
    // interactive keeps its 8 s deadline: 1 s + 8 s < 9.5 s.
    expect(byDefault).toEqual({
      class: 'interactive',
      disposition: '',
      reason: '',
      deadline_met: false,
      useful: false,
    });
    const expired = policyColumns(
      policy,
      rules,
      descriptor({ className: 'batch' }),
      result(504, 4000, 'defer_expired'),
      'timed_out',
      '',
      true,
    );
    expect(expired).toEqual({
      class: 'batch',
      disposition: 'defer',
      reason: 'defer_expired',
      deadline_met: false,
      useful: false,
    });
  });
});
