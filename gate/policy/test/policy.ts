/** A small policy for the tests of gate/policy: 20 seats, reserve 2, three classes. */
import { ManualClock } from '../../clock.js';
import type { Policy } from '../compile.js';
import { PolicyCore } from '../decide.js';
import type { AdmissionEnvelope } from '../envelope.js';
import { parsePolicy } from '../parse.js';

export const TEST_POLICY = `version: 1
capacity_seats: 20
reserve: { seats: 2 }
emergency:
  max_seats: 2
  eligible: { tenants: [ops] }
service_rate_window_ms: 1000
classes:
  hi:
    priority: 100
    guaranteed_seats: 8
    borrow: { allowed: true, max_seats: 4 }
    tenant_max_share_pct: 50
    queue: { max_count: 2, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 2000 }
    estimator: { min_seats: 1, max_seats: 1 }
  mid:
    priority: 50
    guaranteed_seats: 4
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 10000 }
    estimator: { min_seats: 2, max_seats: 4, output_tokens_per_seat: 1000 }
    depends_on: [tools]
    degrade:
      - { kind: max_tokens, max_output_tokens: 2000 }
      - { kind: pool, pool: small }
  lo:
    priority: 10
    guaranteed_seats: 6
    lendable_pct: 50
    borrow: { allowed: true }
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 60000, client_may_shorten: false }
    estimator: { min_seats: 3, max_seats: 3 }
    defer: { enabled: true, max_backlog: 2, drain_per_s: 1 }
envelope:
  class_claim: cls
  routes:
    - { path_prefix: /v1/batch, class: lo }
  default_class: hi
  client_header: { class: x-class, deadline_ms: x-deadline-ms }
retry: { budget_per_intent: 2 }
`;

export function testPolicy(text: string = TEST_POLICY): Policy {
  return parsePolicy(text, 'test-policy.yaml');
}

export function testCore(text?: string): { core: PolicyCore; clock: ManualClock } {
  const clock = new ManualClock(1_000_000);
  return { core: new PolicyCore(testPolicy(text), clock), clock };
}

/** An envelope of class `className` for `tenant`, deadline `deadlineInMs` from `now`. */
export function env(
  className: string,
  tenant: string,
  now: number,
  extra: Partial<AdmissionEnvelope> & { deadlineInMs?: number } = {},
): AdmissionEnvelope {
  const { deadlineInMs, ...rest } = extra;
  return {
    className,
    tenant,
    deadlineMs: now + (deadlineInMs ?? 5000),
    consequence: 'none',
    cost: { promptTokens: 100, maxOutputTokens: 100 },
    ...rest,
  };
}
