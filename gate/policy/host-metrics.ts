/**
 * The policy scorecard in the Prometheus text exposition format (0.0.4), metric names
 * `sluice_policy_*` (listed in docs/policy.md), written with the gate's own escapers and writer
 * (gate/metrics.ts). Times are in seconds as Prometheus expects.
 */
import { type Family, renderPrometheus } from '../metrics.js';
import type { PolicySnapshot } from './host-snapshot.js';
import { REJECT_REASONS } from './scorecard.js';

const P = 'sluice_policy_';

/** Renders a scorecard snapshot (see `PolicyGate.snapshot`) as Prometheus text. */
export function renderPolicyMetrics(s: PolicySnapshot): string {
  const fams = new Map<string, Family>();
  const family = (name: string, type: Family['type'], help: string): Family => {
    let f = fams.get(name);
    if (f === undefined) {
      f = { name: P + name, type, help, samples: [] };
      fams.set(name, f);
    }
    return f;
  };
  const add = (
    name: string,
    type: Family['type'],
    help: string,
    labels: Record<string, string>,
    value: number,
  ): void => {
    family(name, type, help).samples.push({ name: P + name, labels, value });
  };
  for (const [cls, c] of Object.entries(s.classes)) {
    const l = { class: cls };
    add('offered_total', 'counter', 'Requests offered to the policy, per class.', l, c.offered);
    for (const [d, v] of [
      ['admit', c.admitted],
      ['queue', c.queued],
      ['degrade', c.degraded],
      ['defer', c.deferred],
      ['reject', c.rejected],
    ] as const)
      add(
        'dispositions_total',
        'counter',
        'Dispositions at arrival, per class.',
        { ...l, disposition: d },
        v,
      );
    for (const r of REJECT_REASONS)
      add(
        'rejected_total',
        'counter',
        'Rejections per class and reason.',
        { ...l, reason: r },
        c.rejected_by_reason[r],
      );
    for (const [m, v] of Object.entries(c.degraded_by_mode))
      add('degraded_total', 'counter', 'Degraded requests per class and mode.', { ...l, mode: m }, v);
    for (const [e, v] of [
      ['dispatched', c.dispatched],
      ['deadline', c.expired_deadline],
      ['max_age', c.expired_max_age],
      ['cancelled', c.cancelled],
      ['class_removed', c.removed_by_swap],
      ['closed', c.closed],
    ] as const)
      add(
        'queue_exits_total',
        'counter',
        'Queued requests leaving the queue, per class and how.',
        { ...l, exit: e },
        v,
      );
    for (const [o, v] of [
      ['completed', c.completed],
      ['failed', c.failed],
    ] as const)
      add(
        'completions_total',
        'counter',
        'Admitted work ended, per class and outcome.',
        { ...l, outcome: o },
        v,
      );
    add(
      'useful_on_time_total',
      'counter',
      'Completions before their deadline, still wanted and useful, per class.',
      l,
      c.useful_on_time,
    );
    add(
      'wasted_completions_total',
      'counter',
      'Completions after the deadline or after the client disconnected.',
      { ...l, why: 'after_deadline' },
      c.completed_after_deadline,
    );
    add(
      'wasted_completions_total',
      'counter',
      'Completions after the deadline or after the client disconnected.',
      { ...l, why: 'after_disconnect' },
      c.completed_after_disconnect,
    );
    add('queue_depth', 'gauge', 'Requests waiting in the class queue.', l, c.queue_depth);
    add('queue_cost_seats', 'gauge', 'Total estimated seats of the requests waiting.', l, c.queue_cost_seats);
    add('queue_oldest_seconds', 'gauge', 'Age of the oldest waiting request.', l, c.queue_oldest_ms / 1000);
    for (const [q, v] of [
      ['0.5', c.queue_age_ms.p50],
      ['0.95', c.queue_age_ms.p95],
      ['1', c.queue_age_ms.max],
    ] as const)
      add(
        'queue_age_seconds',
        'gauge',
        'Time requests spent in the queue (bucket upper bound; quantile 1 is the exact maximum).',
        { ...l, quantile: q },
        v / 1000,
      );
    add('seats_in_use', 'gauge', 'Class-lane seats held.', l, c.seats_in_use);
    add(
      'seats_granted_total',
      'counter',
      'Seats granted (admit, dispatch, degrade, drain).',
      l,
      c.seats_granted,
    );
    add('fairness_share', 'gauge', "The class's share of all seats granted.", l, c.fairness_share);
    add(
      'starvation_seconds_total',
      'counter',
      'Time the class had waiting work and got no dispatch.',
      l,
      c.starvation_ms_total / 1000,
    );
    add(
      'starvation_max_seconds',
      'gauge',
      'Longest time the class had waiting work and got no dispatch.',
      l,
      c.starvation_ms_max / 1000,
    );
    add(
      'false_shed_total',
      'counter',
      'Requests rejected or expired although their seats fitted before their deadline.',
      l,
      c.false_shed,
    );
    add('defer_backlog', 'gauge', 'Deferred requests pending in the store.', l, c.defer_backlog);
    for (const [e, v] of [
      ['deferred', c.deferred],
      ['drained', c.drained],
      ['expired', c.defer_expired],
      ['cancelled', c.defer_cancelled],
      ['store_failed', c.defer_store_failures],
    ] as const)
      add('defer_total', 'counter', 'Defer life cycle per class.', { ...l, event: e }, v);
    add('reserve_admits_total', 'counter', 'Reserve-lane admissions.', l, c.reserve_admits);
    add('emergency_admits_total', 'counter', 'Emergency-lane admissions.', l, c.emergency_admits);
    add(
      'estimator_seat_error_sum',
      'counter',
      'Sum of estimated minus actual seats (positive: overestimated).',
      l,
      c.estimator.seat_error_sum,
    );
    add(
      'estimator_correction',
      'gauge',
      "The estimator feedback's factor in force (1 when off).",
      l,
      c.estimator.correction_factor,
    );
    add(
      'estimator_reconciled_total',
      'counter',
      'Requests reconciled with actual use.',
      l,
      c.estimator.reconciled,
    );
    add(
      'estimator_underestimated_total',
      'counter',
      'Requests that used more seats than estimated.',
      l,
      c.estimator.underestimated,
    );
    add(
      'tokens_total',
      'counter',
      'Tokens estimated (prompt + max output) and used.',
      { ...l, kind: 'estimated' },
      c.estimator.estimated_tokens,
    );
    add(
      'tokens_total',
      'counter',
      'Tokens estimated (prompt + max output) and used.',
      { ...l, kind: 'actual' },
      c.estimator.actual_tokens,
    );
    // One summary family (no quantiles): `_sum` and `_count` samples under one `# TYPE ... summary`.
    const dur = family('duration_seconds', 'summary', 'Time admitted work held its seats, per class.');
    dur.samples.push(
      {
        name: `${P}duration_seconds_sum`,
        labels: l,
        value: (c.estimator.duration_ms.mean * c.estimator.duration_ms.count) / 1000,
      },
      { name: `${P}duration_seconds_count`, labels: l, value: c.estimator.duration_ms.count },
    );
    for (const [t, ts] of Object.entries(c.tenants)) {
      const tl = { class: cls, tenant: t };
      add('tenant_offered_total', 'counter', 'Requests offered, per class and tenant.', tl, ts.offered);
      add(
        'tenant_useful_on_time_total',
        'counter',
        'Useful on-time completions, per class and tenant.',
        tl,
        ts.useful_on_time,
      );
      add(
        'tenant_fairness_share',
        'gauge',
        "The tenant's share of its class's granted seats.",
        tl,
        ts.fairness_share,
      );
      add(
        'tenant_starvation_max_seconds',
        'gauge',
        'Longest time the tenant waited with no dispatch.',
        tl,
        ts.starvation_ms_max / 1000,
      );
    }
  }
  const r = s.retry;
  add(
    'retry_intents_total',
    'counter',
    'Logical intents (first attempts with an idempotency key).',
    {},
    r.intents,
  );
  add('retry_attempts_total', 'counter', 'Attempts of intents (first attempts and retries).', {}, r.attempts);
  add(
    'duplicate_intents_total',
    'counter',
    'Attempts of an intent in flight or completed (no seat).',
    {},
    r.duplicates,
  );
  add('retry_blocked_total', 'counter', 'Attempts past the retry budget.', {}, r.blocked);
  add('retry_amplification', 'gauge', 'Attempts per intent.', {}, r.amplification);
  add('reserve_seats_in_use', 'gauge', 'Reserve seats held.', {}, s.reserve.in_use);
  add('emergency_seats_in_use', 'gauge', 'Emergency seats held.', {}, s.emergency.in_use);
  add('swaps_total', 'counter', 'Policies swapped in.', {}, s.policy_swaps);
  const ds = s.defer_store;
  add('defer_store_failures_total', 'counter', 'Defer store calls that threw.', {}, ds.failures);
  add(
    'defer_store_stopped_drains_total',
    'counter',
    'Drain steps stopped by a failing defer store.',
    {},
    ds.stopped_drains,
  );
  add(
    'defer_store_unrecorded_ends',
    'gauge',
    'Deferred item ends the store refused, not yet written.',
    {},
    ds.unrecorded_ends,
  );
  add(
    'recovering',
    'gauge',
    '1 while recovering from an unhealthy period, else 0.',
    {},
    s.recovery.state === 'recovering' ? 1 : 0,
  );
  add(
    'unhealthy',
    'gauge',
    '1 while the host reports the system unhealthy, else 0.',
    {},
    s.recovery.state === 'unhealthy' ? 1 : 0,
  );
  add('recoveries_total', 'counter', 'Recoveries completed.', {}, s.recovery.recoveries);
  if (s.recovery.last_ms !== null)
    add('recovery_last_seconds', 'gauge', 'Duration of the last recovery.', {}, s.recovery.last_ms / 1000);
  return renderPrometheus([...fams.values()]);
}
