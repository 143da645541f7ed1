/**
 * A scenario's `gate.policy` in the run: the gate host's {@link PolicyGate} on the run's virtual
 * clock, in front of the gate proper (the rule or SMG settings). Each new inference attempt gets
 * its envelope from the client's inputs (the class claim of its credential, its route, the
 * deadline and Idempotency-Key headers it sends, its declared costs) and one disposition:
 *
 * - admit: on to the gate with its lease;
 * - queue: held until the policy dispatches it (on to the gate) or it expires (refused, 503);
 * - degrade: a `max_tokens` degrade goes on to the gate with the reduced max_tokens the engine
 *   then generates; a `pool` degrade goes to that fallback pool of `gate.fallback_pools`, past
 *   every gate, as the proxy sends it to the rule of that name (sim/run/fallback-pools.ts);
 * - defer: the client gets its 202 and status id; the item waits in the in-memory defer store
 *   and the policy's drain feeds it back at its pace (the request runs then), or it expires;
 *   during a `defer_store_outage` the store throws, so defers are refused (class_capacity, no
 *   Retry-After) and the drain waits for the store;
 * - reject: refused with the reason as its error and a Retry-After only when the policy gives
 *   one (else the client's own fallback delay).
 *
 * Every ending goes back to the policy (seats, useful on time, estimator error).
 *
 * The system's conditions at each decision, dispatch and drain step are the proxy's
 * (proxy/policy/conditions.ts) for the run's one rule:
 *
 * - `healthy`: the proxy's definition — every endpoint of the rule usable and maintenance off.
 *   An endpoint is usable while its engine is up ({@link PoolHealth}: down from an
 *   `endpoint_down`, a `flap`'s down phase or a `capacity_loss` until it is back), and only the
 *   engines the rule lists count (a `replace` changes which: a standby out of the rule does not
 *   count, as the proxy only sees the rule's endpoints). One difference: the proxy reads
 *   usability from its endpoints' circuit breakers, which lag the engine by their probes,
 *   whereas the run knows the moment. While
 *   unhealthy the policy lends no idle seats and the defer drain pauses; the scorecard's
 *   `recovery` counts the unhealthy periods and then the recovery (until no request waits in a
 *   queue and nothing deferred is pending). Every change of health pumps the host (dispatch and a drain step, as the
 *   proxy does on a breaker change), so a period starts and ends at the change, not at the next
 *   decision. Reading the health is O(1): a count of the rule's engines down and the maintenance
 *   flag.
 * - `openDependencies`: the `depends_on` names a timeline `dependency_outage` holds open now
 *   ({@link DependencyOutages}), standing in for the proxy's "the rule of that name has no
 *   endpoint with its breaker closed". Each carries no retry time, as in the proxy (the reopen
 *   is not a promise), so a dependent class's new requests are rejected with `dependency_open`,
 *   503, no Retry-After; classes that do not depend on the name are untouched. As in the gate,
 *   only arrivals check it: work queued or deferred before is still dispatched and drained, and
 *   an admitted request of a dependent class does not fail (the run models the admission, not
 *   the dependency). Each open or close pumps the host, as a change of health does. With no
 *   outage in force the conditions are the same frozen objects as before (no cost).
 * - `availablePools`: the scenario's fallback pools by the proxy's rule
 *   (gate/policy/pool-availability.ts): those with an engine up (the timeline's engine events
 *   with `pool` take a pool's engines down and up), none during `maintenance`. Without
 *   `gate.fallback_pools` there are none (the loader refuses a pool degrade then), and the
 *   conditions are the frozen objects above. A pool coming or going does not pump the host: it
 *   matters only to the decision of an arrival (a degrade), which reads it then.
 */
import {
  type AdmissionEnvelope,
  type Clock,
  type PolicyConditions as Conditions,
  deriveEnvelope,
  type EnvelopeInputs,
  FailingDeferStore,
  MemoryDeferStore,
  type Policy,
  type PolicyAdmission,
  PolicyGate,
  type PolicyLease,
  type PolicyRejectReason,
  type PolicySnapshot,
  type PolicyWaiter,
  parsePolicy,
  type PolicyQueueExit as QueueExit,
} from '../../gate/index.js';
import { dependencyNames } from '../scenario/policy-checks.js';
import type { ScenarioPolicy } from '../scenario/policy-section.js';
import type { Scenario } from '../scenario/resolve.js';
import type { ClientView } from './admission.js';
import { DependencyOutages } from './dependency-outages.js';
import type { FallbackPools } from './fallback-pools.js';
import type { PoolHealth } from './pool-health.js';
import type { ClassSummary, Outcome, PolicySummary } from './records.js';
import type { Attempt, Lifecycle, PolicyHooks, PolicyVerdict } from './requests.js';

/** The path a client without a route sends to. */
export const DEFAULT_ROUTE = '/v1/chat/completions';

/**
 * HTTP status of a policy reject, by reason, as the proxy answers it (proxy/policy/http-mapping.ts):
 * RFC 6585's 429 for a caller's quota; 503 for the service's capacity; 504 for a deadline that
 * cannot be met; 409 for a duplicate intent.
 */
export const REJECT_STATUS: Readonly<Record<PolicyRejectReason, number>> = {
  tenant_quota: 429,
  retry_budget: 429,
  duplicate_intent: 409,
  class_capacity: 503,
  queue_full: 503,
  dependency_open: 503,
  deadline_impossible: 504,
};

/** What the run's policy made of the deferred work, beside the host's own scorecard. */
export interface DeferTally {
  /** Deferred attempts whose request later completed. */
  completed: number;
}

type Held =
  | { kind: 'lease'; lease: PolicyLease<Attempt> }
  | { kind: 'waiter'; waiter: PolicyWaiter<Attempt> }
  | { kind: 'deferred'; id: string };

/** The policy in front of a run's gate. */
export class SimPolicy implements PolicyHooks {
  readonly file: string;
  readonly policy: Policy;
  readonly gate: PolicyGate<Attempt>;
  /** The in-memory defer store behind an outage switch (the timeline's defer_store_outage). */
  readonly store = new FailingDeferStore(new MemoryDeferStore());
  readonly #clock: Clock;
  #lifecycle: Lifecycle | null = null;
  /** Deferred attempts by the store's item id. */
  readonly #deferred = new Map<string, Attempt>();
  readonly defers: DeferTally = { completed: 0 };
  /** The policy's dependencies, opened and closed by the timeline's `dependency_outage` events. */
  readonly dependencies: DependencyOutages;
  /** The conditions the policy reads at each decision, dispatch and drain step (see the file's header). */
  readonly conditions: () => Conditions;

  /** The scenario's fallback pools, when it declares some. */
  readonly #fallback: FallbackPools | undefined;

  /**
   * @param health the pool's health (default: always healthy); call {@link healthChanged} after
   *   each change of it
   * @param fallback the scenario's fallback pools (`gate.fallback_pools`), if any
   */
  constructor(
    section: ScenarioPolicy,
    clock: Clock,
    health: Pick<PoolHealth, 'healthy' | 'maintenance'> = ALWAYS_HEALTHY,
    fallback?: FallbackPools,
  ) {
    this.#fallback = fallback;
    this.file = section.file;
    this.policy = parsePolicy(section.text, section.file);
    clock = microsecondClock(clock);
    this.#clock = clock;
    // A dependency opening or closing pumps the host, as a change of the pool's health does.
    const deps = new DependencyOutages(dependencyNames(this.policy), () => this.gate.pump());
    this.dependencies = deps;
    // The live map of open names: conditions read it at each decision, with no copy.
    const healthyOpen: Conditions = Object.freeze({ openDependencies: deps.open });
    const unhealthyOpen: Conditions = Object.freeze({ healthy: false, openDependencies: deps.open });
    const base = (): Conditions =>
      deps.anyOpen ? (health.healthy ? healthyOpen : unhealthyOpen) : health.healthy ? HEALTHY : UNHEALTHY;
    const pooled = fallback === undefined ? undefined : withPools(fallback);
    this.conditions = pooled === undefined ? base : () => pooled(base(), health.maintenance);
    let ids = 0;
    this.gate = new PolicyGate<Attempt>({
      policy: this.policy,
      clock,
      store: this.store,
      conditions: this.conditions,
      // Ids from a counter: the run's outputs must not depend on anything but the seed.
      deferId: () => `d${(++ids).toString(36)}`,
      events: {
        onDispatch: (lease) => this.#dispatched(lease),
        onExpire: (a, why) => this.#expired(a, why),
        onDrain: (item) => {
          const a = this.#deferred.get(item.id);
          this.#deferred.delete(item.id);
          return a !== undefined && a.phase === 'held' ? a : undefined;
        },
        onDeferExpire: (item) => {
          const a = this.#deferred.get(item.id);
          this.#deferred.delete(item.id);
          if (a === undefined) return;
          a.policyState = undefined;
          a.reason = 'defer_expired';
          this.#lc().policyRefuse(
            a,
            { status: 504, error: 'defer_expired', retryAfterS: undefined },
            'timed_out',
          );
        },
      },
    });
  }

  /**
   * The pool's health changed: the host dispatches and drains by the new conditions now and its
   * scorecard starts or ends the unhealthy period at this instant.
   */
  healthChanged(): void {
    this.gate.pump();
  }

  /** The lifecycle the policy hands held attempts back to (set once, after both exist). */
  attach(lifecycle: Lifecycle): void {
    this.#lifecycle = lifecycle;
  }

  #lc(): Lifecycle {
    if (this.#lifecycle === null) throw new Error('SimPolicy: no lifecycle attached');
    return this.#lifecycle;
  }

  /** The envelope of an attempt, from its client's inputs, at `now`. */
  envelopeOf(a: Attempt, now: number): AdmissionEnvelope {
    const d = a.d;
    const e = d.envelope;
    const doc = this.policy.document.envelope;
    const claims: Record<string, unknown> = {};
    if (d.tenant !== undefined) claims[doc.tenant_claim] = d.tenant;
    if (e?.className !== undefined && doc.class_claim !== undefined) claims[doc.class_claim] = e.className;
    const headers = new Map<string, string>();
    const dh = doc.client_header.deadline_ms;
    if (dh !== undefined && e?.deadlineMs !== undefined)
      headers.set(dh, String(Math.max(0, Math.floor(d.firstSentAtMs + e.deadlineMs - now))));
    if (e?.idempotency !== 'none') headers.set(this.policy.retry.idempotencyHeader, `intent-${d.logicalId}`);
    const inputs: EnvelopeInputs = {
      claims,
      path: e?.route ?? DEFAULT_ROUTE,
      header: (name) => headers.get(name),
      cost: {
        promptTokens: Math.round(d.promptTokens * (e?.promptEstimateShare ?? 1)),
        maxOutputTokens: d.outputTokens,
        toolCalls: e?.toolCalls ?? 0,
      },
      ...(e?.consequence === undefined ? {} : { consequence: e.consequence }),
      ...(e?.reserve === true ? { reserve: true } : {}),
    };
    const r = deriveEnvelope(this.policy, inputs, now);
    // The scenario's inputs were checked against the policy when it was loaded.
    if (!r.ok) throw new Error(`request ${d.id}: ${r.problem.field}: ${r.problem.detail}`);
    // A class claim the policy has no claim name for is still the class the client is in.
    if (e?.className !== undefined && doc.class_claim === undefined && r.envelope.className !== e.className)
      return { ...r.envelope, className: e.className };
    return r.envelope;
  }

  arrive(a: Attempt): PolicyVerdict {
    const now = this.#clock.now();
    const env = this.envelopeOf(a, now);
    a.className = env.className;
    a.policyDeadlineMs = env.deadlineMs;
    const res: PolicyAdmission<Attempt> = this.gate.submit(env, a);
    a.disposition = res.kind;
    switch (res.kind) {
      case 'admit':
        this.#hold(a, { kind: 'lease', lease: res.lease });
        return GO;
      case 'degrade':
        this.#hold(a, { kind: 'lease', lease: res.lease });
        if (res.mode.kind === 'pool') {
          a.reason = `pool_${res.mode.pool}`;
          return { kind: 'pool', pool: res.mode.pool };
        }
        a.reason = `max_tokens_${res.mode.max_output_tokens}`;
        this.#cap(a, res.lease);
        return GO;
      case 'queue':
        this.#hold(a, { kind: 'waiter', waiter: res.waiter });
        return HELD;
      case 'defer':
        this.#hold(a, { kind: 'deferred', id: res.item.id });
        this.#deferred.set(res.item.id, a);
        return HELD;
      case 'reject':
        a.reason = res.reason;
        return {
          kind: 'refuse',
          outcome: 'shed',
          view: {
            status: REJECT_STATUS[res.reason],
            error: res.reason,
            retryAfterS: res.retryAfter === 'unknown' ? undefined : res.retryAfter,
          },
        };
    }
  }

  #hold(a: Attempt, h: Held): void {
    a.policyState = h;
  }

  /** A max_tokens degrade: the engine generates no more than the lease allows. */
  #cap(a: Attempt, lease: PolicyLease<Attempt>): void {
    const max = lease.maxOutputTokens;
    if (max !== undefined && max < a.outputTokens) a.outputTokens = Math.max(1, max);
  }

  #dispatched(lease: PolicyLease<Attempt>): void {
    const a = lease.ctx;
    if (a.phase !== 'held') {
      // Its client left in the same instant: the seats go straight back.
      this.gate.release(lease, { outcome: 'cancelled', clientConnected: false });
      return;
    }
    this.#hold(a, { kind: 'lease', lease });
    this.#cap(a, lease);
    this.#lc().policyGo(a);
  }

  #expired(a: Attempt, why: QueueExit): void {
    a.policyState = undefined;
    a.reason = `queue_${why}`;
    this.#lc().policyRefuse(a, EXPIRED_VIEW, 'timed_out');
  }

  ended(a: Attempt, outcome: Outcome, clientLeft: boolean): void {
    const h = a.policyState as Held | undefined;
    a.policyState = undefined;
    if (h === undefined) return;
    const now = this.#clock.now();
    if (h.kind === 'waiter') {
      this.gate.cancel(h.waiter);
      return;
    }
    if (h.kind === 'deferred') {
      this.#deferred.delete(h.id);
      this.gate.cancelDeferred(h.id);
      return;
    }
    const completed = outcome === 'completed';
    if (completed && h.lease.via === 'drain') this.defers.completed++;
    const useful = completed && now <= a.policyDeadlineMs;
    const mode = h.lease.mode;
    if (mode?.kind === 'pool') this.#fallback?.ended(mode.pool, outcome, useful && !clientLeft);
    this.gate.release(h.lease, {
      outcome: completed ? 'completed' : clientLeft || outcome === 'cancelled' ? 'cancelled' : 'failed',
      clientConnected: !clientLeft,
      useful,
      actual: { promptTokens: a.d.promptTokens, outputTokens: a.generatedSoFar },
      status: completed ? 200 : 502,
    });
  }

  /** Deferred attempts still waiting in the store. */
  get deferredPending(): number {
    return this.#deferred.size;
  }

  /** The run's time now, ms. */
  now(): number {
    return this.#clock.now();
  }

  /** The host's scorecard. */
  snapshot(): PolicySnapshot {
    return this.gate.snapshot();
  }

  /** The fallback pools' figures, when the scenario declares some. */
  fallbackFigures(): PolicySummary['fallback_pools'] {
    return this.#fallback?.figures();
  }
}

/**
 * The conditions with the fallback pools' availability added: `base` (one of a few frozen
 * objects) with `availablePools`, one frozen object per base and maintenance state, made once
 * for each set of available pools (a fallback engine going down or up makes a new set).
 */
function withPools(fallback: FallbackPools): (base: Conditions, maintenance: boolean) => Conditions {
  const made = [new Map<Conditions, Conditions>(), new Map<Conditions, Conditions>()];
  const madeFor: (ReadonlySet<string> | null)[] = [null, null];
  return (base, maintenance) => {
    const k = maintenance ? 1 : 0;
    const pools = fallback.available(maintenance);
    const m = made[k]!;
    if (madeFor[k] !== pools) {
      m.clear();
      madeFor[k] = pools;
    }
    let c = m.get(base);
    if (c === undefined) {
      c = Object.freeze({ ...base, availablePools: pools });
      m.set(base, c);
    }
    return c;
  };
}

/**
 * The run's clock as the policy host sees it, with every timer rounded up to the simulator's whole
 * microsecond. The simulator keeps time in µs and rounds a timer's time to the nearest one; a
 * queue expiry at a fractional µs could then fire just before it is due, find nothing due, set
 * itself for the same µs again and never let time advance. The Clock port promises "never
 * earlier", so the policy gets that promise kept here.
 */
function microsecondClock(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    every: (periodMs, fn) => clock.every(periodMs, fn),
    timer(fn) {
      const t = clock.timer(fn);
      // One µs late at most half a µs early: never before the time asked for.
      return { set: (atMs) => t.set(atMs + 0.001), clear: () => t.clear() };
    },
  };
}

const ALWAYS_HEALTHY: Pick<PoolHealth, 'healthy' | 'maintenance'> = Object.freeze({
  healthy: true,
  maintenance: false,
});
/** The host's default conditions (healthy, no pool, no open dependency): what a run without an outage gets. */
const HEALTHY: Conditions = Object.freeze({});
const UNHEALTHY: Conditions = Object.freeze({ healthy: false });

const GO: PolicyVerdict = Object.freeze({ kind: 'go' });
const HELD: PolicyVerdict = Object.freeze({ kind: 'held' });
// 504 as behind the proxy (its policy_queue_deadline / policy_queue_max_age).
const EXPIRED_VIEW: ClientView = Object.freeze({
  status: 504,
  error: 'queue_expired',
  retryAfterS: undefined,
});

/** The run records class fields: it has a policy, or some client carries envelope inputs. */
export function hasClassColumns(s: Scenario): boolean {
  return (
    s.policy !== undefined ||
    s.clients.envelope !== undefined ||
    (s.clients.tenants ?? []).some((t) => t.envelope !== undefined)
  );
}

/**
 * The summary's policy section: the host's scorecard and the clients' useful on-time completions;
 * with `withDependencies` (the timeline has a `dependency_outage`), each dependency's figures.
 */
export function policySummary(
  p: SimPolicy,
  classes: readonly ClassSummary[],
  withDependencies = false,
): PolicySummary {
  const scorecard = p.snapshot();
  const fallback = p.fallbackFigures();
  return {
    file: p.file,
    scorecard,
    useful_on_time: Object.fromEntries(classes.map((c) => [c.class, c.useful_on_time])),
    deferred: { completed: p.defers.completed, pending_at_end: p.deferredPending },
    defer_store: scorecard.defer_store,
    ...(withDependencies ? { dependencies: p.dependencies.figures(p.now()) } : {}),
    ...(fallback === undefined ? {} : { fallback_pools: fallback }),
  };
}
