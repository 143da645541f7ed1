/**
 * The pure decision core of a policy: for one request envelope, exactly one of five dispositions
 * (admit, queue, degrade, defer, reject with an honest reason), from the seat accounting, the
 * queue's own recent service rate and the time of the Clock port. The host keeps the queue items,
 * the defer store and the dispatch loop; this core keeps their counts and the rules.
 */
import type { Clock } from '../clock.js';
import type { Policy, PolicyClass } from './compile.js';
import { DeferBook } from './defer.js';
import type { AdmissionEnvelope } from './envelope.js';
import { type CostEstimate, estimateSeats } from './estimator.js';
import { RetryBudget } from './retry-budget.js';
import type { DegradeOption } from './schema.js';
import { type RejectReason, Scorecard } from './scorecard.js';
import { type Lane, SeatBook, type SeatGrant } from './seats.js';
import { ServiceRate } from './service-rate.js';

/** What the host knows of the system at the moment of a decision. */
export interface Conditions {
  /** Borrowing of idle seats is allowed only while healthy (default true). */
  readonly healthy?: boolean;
  /** Dependencies whose circuit is open, with the time it is due to be tried again when known. */
  readonly openDependencies?: ReadonlyMap<string, { readonly retryAtMs?: number }>;
  /** Fallback pools currently able to take work. */
  readonly availablePools?: ReadonlySet<string>;
}

const HEALTHY: Conditions = Object.freeze({});

/** Seats held by an admitted (or degraded-and-admitted) request; give it back with {@link PolicyCore.release}. */
export interface Grant extends SeatGrant {
  readonly className: string;
  readonly estimatedSeats: number;
  readonly maxOutputTokens: number;
  readonly admittedAtMs: number;
  readonly idempotencyKey: string | undefined;
  /** True once released; a second release is refused. */
  released: boolean;
}

/** A request waiting in its class queue (the host keeps it and calls {@link PolicyCore.dispatch}). */
export interface QueueTicket {
  readonly classIndex: number;
  readonly className: string;
  readonly tenant: string;
  readonly seats: number;
  readonly cost: CostEstimate;
  readonly deadlineMs: number;
  readonly enqueuedAtMs: number;
  readonly idempotencyKey: string | undefined;
  left: boolean;
}

/** A Retry-After in whole seconds, or `unknown` when the server cannot justify one. */
export type RetryAfter = number | 'unknown';

/** The one disposition of a request. */
export type Disposition =
  | { readonly kind: 'admit'; readonly grant: Grant }
  | {
      readonly kind: 'queue';
      readonly ticket: QueueTicket;
      /** From the queue's recent service rate; undefined when the rate is not yet known. */
      readonly expectedWaitMs: number | undefined;
    }
  | {
      readonly kind: 'degrade';
      readonly mode: DegradeOption;
      /** Seats held for a reduced max_tokens; absent for another pool (whose seats are not this policy's). */
      readonly grant?: Grant;
    }
  | {
      readonly kind: 'defer';
      readonly className: string;
      readonly backlog: number;
      /** Seats the request was estimated at (stored with the item; it needs them when fed back). */
      readonly seats: number;
    }
  | {
      readonly kind: 'reject';
      readonly reason: RejectReason;
      readonly retryAfter: RetryAfter;
      readonly detail: string;
    };

/** What leaving a queue came to. */
export type DispatchOutcome =
  | { readonly kind: 'dispatched'; readonly grant: Grant }
  | { readonly kind: 'wait' }
  | { readonly kind: 'expired'; readonly why: 'deadline' | 'max_age' };

/** How a request ended, with what it actually used (for the estimator's error). */
export interface ActualUse {
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly toolCalls?: number;
}

/** A bad input from the host (an unknown class): a programming error, not a request outcome. */
export class PolicyInputError extends Error {
  override readonly name = 'PolicyInputError';
  readonly code = 'SLUICE_E_POLICY_INPUT';
}

/** The decision core of one compiled policy. */
export class PolicyCore {
  readonly policy: Policy;
  readonly seats: SeatBook;
  readonly intents: RetryBudget;
  readonly defers: DeferBook;
  readonly score: Scorecard;
  readonly #clock: Clock;
  readonly #classes: readonly PolicyClass[];
  readonly #rates: ServiceRate[];
  readonly #qCount: number[];
  readonly #qCost: number[];
  /** Estimator feedback per class: the correction factor in force (1 until min_samples) and its running value. */
  readonly #factor: number[];
  readonly #running: number[];
  readonly #samples: number[];

  /**
   * @param options.intents a retry memory to carry over (a policy swap keeps every intent's
   *   attempts and state); it is reconfigured to this policy's budget and bounds
   */
  constructor(policy: Policy, clock: Clock, options: { readonly intents?: RetryBudget } = {}) {
    const now = clock.now();
    this.policy = policy;
    this.#clock = clock;
    this.#classes = policy.classes;
    this.seats = new SeatBook(policy);
    const r = policy.retry;
    if (options.intents !== undefined) {
      this.intents = options.intents;
      this.intents.configure(r.budgetPerIntent, r.rememberMs, r.maxIntents);
    } else this.intents = new RetryBudget(r.budgetPerIntent, r.rememberMs, r.maxIntents);
    this.defers = new DeferBook(policy.classes, now);
    this.score = new Scorecard(policy.classes.map((c) => c.name));
    this.#rates = policy.classes.map(() => new ServiceRate(policy.serviceRateWindowMs, now));
    this.#qCount = policy.classes.map(() => 0);
    this.#qCost = policy.classes.map(() => 0);
    this.#factor = policy.classes.map(() => 1);
    this.#running = policy.classes.map(() => 1);
    this.#samples = policy.classes.map(() => 0);
  }

  /** Seats a request of class `name` with `cost` is estimated at now (the feedback's factor applied). */
  seatsFor(name: string, cost: CostEstimate): number {
    const i = this.#index(name);
    return estimateSeats(this.#classes[i]!.estimator, cost, this.#factor[i]);
  }

  /**
   * The estimator feedback's state of class `name`: the factor in force (1 when feedback is off
   * or before min_samples), its running value and the samples seen.
   */
  estimatorCorrection(name: string): { factor: number; running: number; samples: number } {
    const i = this.#index(name);
    return { factor: this.#factor[i]!, running: this.#running[i]!, samples: this.#samples[i]! };
  }

  /**
   * Carries a class's feedback state into this core (a policy swap), clamped to this policy's
   * bounds; ignored for a class not in the policy or when this policy has no feedback.
   */
  restoreEstimatorCorrection(name: string, running: number, samples: number): void {
    const fb = this.policy.estimatorFeedback;
    const c = this.policy.byName.get(name);
    if (fb === undefined || c === undefined) return;
    const r = Math.min(fb.maxFactor, Math.max(fb.minFactor, running));
    this.#running[c.index] = r;
    this.#samples[c.index] = samples;
    this.#factor[c.index] = samples >= fb.minSamples ? r : 1;
  }

  /** Feeds one reconciled request of class `i` into its correction factor. */
  #feedback(i: number, estimated: number, actual: number): void {
    const fb = this.policy.estimatorFeedback;
    if (fb === undefined || estimated <= 0) return;
    const r = this.#running[i]! * (1 - fb.alpha + (fb.alpha * actual) / estimated);
    this.#running[i] = Math.min(fb.maxFactor, Math.max(fb.minFactor, r));
    this.#samples[i]!++;
    if (this.#samples[i]! >= fb.minSamples) this.#factor[i] = this.#running[i]!;
  }

  /** Requests waiting in class `name`'s queue, and their total seats. */
  queued(name: string): { count: number; costSeats: number } {
    const i = this.#index(name);
    return { count: this.#qCount[i]!, costSeats: this.#qCost[i]! };
  }

  #index(name: string): number {
    const c = this.policy.byName.get(name);
    if (c === undefined) throw new PolicyInputError(`class ${JSON.stringify(name)} is not in the policy`);
    return c.index;
  }

  /** Decides one request. Exactly one disposition; every one is counted in the scorecard. */
  decide(env: AdmissionEnvelope, cond: Conditions = HEALTHY): Disposition {
    const i = this.#index(env.className);
    const now = this.#clock.now();
    this.score.offered(i);
    const d = this.#judge(i, env, now, cond);
    this.score.tenant(i, env.tenant, d.kind);
    return d;
  }

  #judge(i: number, env: AdmissionEnvelope, now: number, cond: Conditions): Disposition {
    const key = env.idempotencyKey;
    if (key !== undefined) {
      const verdict = this.intents.begin(key, now);
      if (verdict === 'duplicate_in_flight' || verdict === 'duplicate_completed') {
        const state = verdict === 'duplicate_in_flight' ? 'in flight' : 'completed';
        return this.#reject(i, 'duplicate_intent', 'unknown', `intent ${key} is already ${state}`);
      }
      if (verdict === 'exhausted')
        return this.#reject(
          i,
          'retry_budget',
          'unknown',
          `intent ${key} used its ${this.policy.retry.budgetPerIntent} attempts`,
        );
    }
    const d = this.#place(i, env, now, cond);
    if (key !== undefined && d.kind === 'reject') this.intents.end(key, 'failed', now);
    return d;
  }

  #place(i: number, env: AdmissionEnvelope, now: number, cond: Conditions): Disposition {
    const c = this.#classes[i]!;
    const seats = estimateSeats(c.estimator, env.cost, this.#factor[i]);
    const remaining = env.deadlineMs - now;
    if (remaining <= 0) return this.#reject(i, 'deadline_impossible', 'unknown', 'the deadline has passed');
    if (env.lane === 'reserve') {
      if (this.seats.canTakeReserve(seats)) {
        this.score.reserveAdmit(i);
        return this.#admit(i, env, seats, 'reserve', now);
      }
      return this.#reject(
        i,
        'class_capacity',
        'unknown',
        `the reserve of ${this.policy.reserveSeats} seats is in use`,
      );
    }
    if (c.dependsOn.length > 0 && cond.openDependencies !== undefined) {
      for (const dep of c.dependsOn) {
        const open = cond.openDependencies.get(dep);
        if (open === undefined) continue;
        const ra =
          open.retryAtMs === undefined ? 'unknown' : Math.max(1, Math.ceil((open.retryAtMs - now) / 1000));
        return this.#reject(i, 'dependency_open', ra, `dependency ${dep} is open`);
      }
    }
    if (env.lane === 'emergency' && this.seats.canTakeEmergency(seats)) {
      this.score.emergencyAdmit(i, {
        atMs: now,
        className: c.name,
        tenant: env.tenant,
        seats,
        eligibleBy: env.eligibleBy ?? 'envelope',
      });
      return this.#admit(i, env, seats, 'emergency', now);
    }
    const mayBorrow = this.#mayBorrow(i, cond);
    const overQuota = !this.#tenantFits(c, env.tenant, seats);
    if (!overQuota && this.seats.canTake(i, seats, mayBorrow))
      return this.#admit(i, env, seats, 'class', now);
    let why: RejectReason = overQuota ? 'tenant_quota' : 'class_capacity';
    let detail = overQuota
      ? `tenant ${env.tenant} holds ${this.seats.tenantUse(i, env.tenant)} of its ${c.tenantQuota} seats in ${c.name}`
      : `class ${c.name} has no free seats for ${seats}`;
    const wait = this.#rates[i]!.waitMs(this.#qCost[i]! + seats, now);
    if (!overQuota && c.queue.maxCount > 0) {
      if (this.#qCount[i]! >= c.queue.maxCount || this.#qCost[i]! + seats > c.queue.maxCostSeats) {
        why = 'queue_full';
        detail = `queue of ${c.name} holds ${this.#qCount[i]} requests of ${this.#qCost[i]} seats`;
      } else if (wait === undefined || (wait < remaining && wait <= c.queue.maxAgeMs)) {
        return this.#enqueue(i, env, seats, now, wait);
      } else {
        why = 'deadline_impossible';
        detail = `expected wait ${Math.ceil(wait)} ms exceeds the ${wait >= remaining ? `${remaining} ms left` : `queue's ${c.queue.maxAgeMs} ms age bound`}`;
      }
    }
    for (const opt of c.degrade) {
      if (opt.kind === 'pool') {
        if (cond.availablePools?.has(opt.pool)) return this.#degrade(i, opt, undefined);
        continue;
      }
      const reduced = {
        ...env.cost,
        maxOutputTokens: Math.min(env.cost.maxOutputTokens, opt.max_output_tokens),
      };
      const s2 = estimateSeats(c.estimator, reduced, this.#factor[i]);
      if (s2 < seats && this.#tenantFits(c, env.tenant, s2) && this.seats.canTake(i, s2, mayBorrow))
        return this.#degrade(i, opt, this.#grant(i, env, s2, 'class', now, reduced.maxOutputTokens));
    }
    if (this.defers.hasRoom(i)) {
      this.defers.added(i);
      this.score.disposition(i, 'defer');
      return { kind: 'defer', className: c.name, backlog: this.defers.backlog(i), seats };
    }
    const justified = (why === 'queue_full' || why === 'class_capacity') && wait !== undefined;
    return this.#reject(i, why, justified ? Math.max(1, Math.ceil(wait / 1000)) : 'unknown', detail);
  }

  /** A tenant holding nothing always fits; otherwise its seats plus these stay within the quota. */
  #tenantFits(c: PolicyClass, tenant: string, seats: number): boolean {
    if (c.tenantQuota === Number.POSITIVE_INFINITY) return true;
    const held = this.seats.tenantUse(c.index, tenant);
    return held === 0 || held + seats <= c.tenantQuota;
  }

  /**
   * Class `i` may borrow idle seats: it is allowed to, the system is healthy, and no other class
   * wants them (none of equal or higher priority waits, and none waits below its own guarantee).
   */
  #mayBorrow(i: number, cond: Conditions): boolean {
    const c = this.#classes[i]!;
    if (!c.borrowAllowed || cond.healthy === false) return false;
    for (let k = 0; k < this.#classes.length; k++) {
      if (k === i || this.#qCount[k] === 0) continue;
      const o = this.#classes[k]!;
      if (o.priority >= c.priority || this.seats.used(k) < o.guaranteed) return false;
    }
    return true;
  }

  #grant(i: number, env: AdmissionEnvelope, seats: number, lane: Lane, now: number, maxOut: number): Grant {
    return this.#grantOf(i, env.tenant, seats, lane, now, maxOut, env.idempotencyKey);
  }

  #grantOf(
    i: number,
    tenant: string,
    seats: number,
    lane: Lane,
    now: number,
    maxOut: number,
    key: string | undefined,
  ): Grant {
    this.seats.take(i, tenant, seats, lane);
    // One object shape for every grant (no spread): the hot path stays monomorphic.
    return {
      classIndex: i,
      tenant,
      seats,
      lane,
      className: this.#classes[i]!.name,
      estimatedSeats: seats,
      maxOutputTokens: maxOut,
      admittedAtMs: now,
      idempotencyKey: key,
      released: false,
    };
  }

  #admit(i: number, env: AdmissionEnvelope, seats: number, lane: Lane, now: number): Disposition {
    this.score.disposition(i, 'admit');
    return { kind: 'admit', grant: this.#grant(i, env, seats, lane, now, env.cost.maxOutputTokens) };
  }

  #degrade(i: number, mode: DegradeOption, grant: Grant | undefined): Disposition {
    this.score.disposition(i, 'degrade');
    return grant === undefined ? { kind: 'degrade', mode } : { kind: 'degrade', mode, grant };
  }

  #enqueue(
    i: number,
    env: AdmissionEnvelope,
    seats: number,
    now: number,
    wait: number | undefined,
  ): Disposition {
    this.#qCount[i]!++;
    this.#qCost[i]! += seats;
    this.score.disposition(i, 'queue');
    const ticket: QueueTicket = {
      classIndex: i,
      className: this.#classes[i]!.name,
      tenant: env.tenant,
      seats,
      cost: env.cost,
      deadlineMs: env.deadlineMs,
      enqueuedAtMs: now,
      idempotencyKey: env.idempotencyKey,
      left: false,
    };
    return { kind: 'queue', ticket, expectedWaitMs: wait };
  }

  #reject(i: number, reason: RejectReason, retryAfter: RetryAfter, detail: string): Disposition {
    this.score.rejected(i, reason);
    return { kind: 'reject', reason, retryAfter, detail };
  }

  /**
   * Tries to move a queued request to a seat: expired when its deadline or the queue's age bound has
   * passed (it leaves the queue), dispatched when its seats fit now, else it keeps waiting.
   */
  dispatch(t: QueueTicket, cond: Conditions = HEALTHY): DispatchOutcome {
    if (t.left) throw new PolicyInputError('the request already left the queue');
    const now = this.#clock.now();
    const c = this.#classes[t.classIndex]!;
    if (now >= t.deadlineMs || now - t.enqueuedAtMs > c.queue.maxAgeMs) {
      this.#leave(t, now, 'failed');
      return { kind: 'expired', why: now >= t.deadlineMs ? 'deadline' : 'max_age' };
    }
    if (
      !this.#tenantFits(c, t.tenant, t.seats) ||
      !this.seats.canTake(t.classIndex, t.seats, this.#mayBorrow(t.classIndex, cond))
    )
      return { kind: 'wait' };
    this.#leave(t, now, undefined);
    const env: AdmissionEnvelope = {
      className: t.className,
      tenant: t.tenant,
      deadlineMs: t.deadlineMs,
      consequence: 'none',
      cost: t.cost,
      ...(t.idempotencyKey !== undefined ? { idempotencyKey: t.idempotencyKey } : {}),
    };
    return {
      kind: 'dispatched',
      grant: this.#grant(t.classIndex, env, t.seats, 'class', now, t.cost.maxOutputTokens),
    };
  }

  /** A queued request leaves without a seat (cancelled, disconnected); its intent may be retried. */
  cancelQueued(t: QueueTicket): void {
    if (!t.left) this.#leave(t, this.#clock.now(), 'failed');
  }

  #leave(t: QueueTicket, now: number, outcome: 'failed' | undefined): void {
    t.left = true;
    this.#qCount[t.classIndex]!--;
    this.#qCost[t.classIndex]! -= t.seats;
    if (outcome !== undefined && t.idempotencyKey !== undefined)
      this.intents.end(t.idempotencyKey, outcome, now);
  }

  /**
   * Returns a grant's seats, records them in the class's service rate and, with `actual`, the
   * estimator's error. `completed` makes later attempts of its intent duplicates; otherwise the
   * intent may be retried within its budget.
   * @returns false when the grant was already released (nothing changes)
   */
  release(
    g: Grant,
    outcome: 'completed' | 'failed' | 'cancelled' = 'completed',
    actual?: ActualUse,
  ): boolean {
    if (g.released) return false;
    g.released = true;
    const now = this.#clock.now();
    this.seats.release(g);
    if (g.lane === 'class') this.#rates[g.classIndex]!.note(g.seats, now);
    if (actual !== undefined) {
      const c = this.#classes[g.classIndex]!;
      const used = estimateSeats(c.estimator, {
        promptTokens: actual.promptTokens,
        maxOutputTokens: actual.outputTokens,
        ...(actual.toolCalls !== undefined ? { toolCalls: actual.toolCalls } : {}),
      });
      this.score.reconciled(g.classIndex, g.estimatedSeats, used, g.maxOutputTokens - actual.outputTokens);
      if (g.lane === 'class') this.#feedback(g.classIndex, g.estimatedSeats, used);
    }
    if (g.idempotencyKey !== undefined)
      this.intents.end(g.idempotencyKey, outcome === 'completed' ? 'completed' : 'failed', now);
    return true;
  }

  /** A deferred request of class `name` left the store; `outcome` ends its intent when it had one. */
  deferEnded(name: string, idempotencyKey?: string, outcome: 'completed' | 'failed' = 'completed'): void {
    this.defers.removed(this.#index(name));
    if (idempotencyKey !== undefined) this.intents.end(idempotencyKey, outcome, this.#clock.now());
  }

  /** Whether one deferred request of class `name` may be fed back now (the drain pace). */
  mayDrain(name: string, cond: Conditions = HEALTHY): boolean {
    return this.defers.mayDrain(this.#index(name), this.#clock.now(), cond.healthy !== false);
  }

  /** A request degraded to another pool ended; ends its intent. */
  intentEnded(idempotencyKey: string, outcome: 'completed' | 'failed'): void {
    this.intents.end(idempotencyKey, outcome, this.#clock.now());
  }

  /**
   * A deferred request of class `name` is fed back: it gets seats only as a new request of its
   * class would (tenant quota, class seats, borrowing only while healthy and unwanted) and only
   * when the drain pace allows one now. With a grant, it has left the backlog; its intent stays in
   * flight until the grant is released. Not counted as a new offer.
   * @returns the grant, or undefined when it must keep waiting in the store
   */
  admitDeferred(
    name: string,
    tenant: string,
    seats: number,
    idempotencyKey: string | undefined,
    cond: Conditions = HEALTHY,
  ): Grant | undefined {
    const i = this.#index(name);
    const c = this.#classes[i]!;
    if (!this.#tenantFits(c, tenant, seats) || !this.seats.canTake(i, seats, this.#mayBorrow(i, cond)))
      return undefined;
    const now = this.#clock.now();
    if (!this.defers.mayDrain(i, now, cond.healthy !== false)) return undefined;
    this.defers.removed(i);
    return this.#grantOf(i, tenant, seats, 'class', now, 0, idempotencyKey);
  }

  /**
   * Sets the defer backlog of class `name` to `count` (a store reopened, or a policy swapped in
   * while items wait). Unknown classes are ignored: their items wait in the store untouched.
   */
  restoreBacklog(name: string, count: number): void {
    const c = this.policy.byName.get(name);
    if (c !== undefined) this.defers.restore(c.index, count);
  }

  /**
   * Carries a grant of another core (a policy swap) into this one by class name, taking its seats
   * without checking them (no preemption: until releases bring use back under this policy's
   * limits, new work of the class waits). Reserve and emergency grants stay in their lanes.
   * @returns the grant of this core, or undefined when the class is not in this policy
   */
  adoptGrant(g: Grant): Grant | undefined {
    const c = this.policy.byName.get(g.className);
    if (c === undefined) return undefined;
    const ng: Grant = {
      classIndex: c.index,
      tenant: g.tenant,
      seats: g.seats,
      lane: g.lane,
      className: c.name,
      estimatedSeats: g.estimatedSeats,
      maxOutputTokens: g.maxOutputTokens,
      admittedAtMs: g.admittedAtMs,
      idempotencyKey: g.idempotencyKey,
      released: false,
    };
    this.seats.take(c.index, g.tenant, g.seats, g.lane);
    return ng;
  }

  /**
   * Seats of a grant whose class is not in this policy (a swap removed it): held outside every
   * class until released with {@link releaseUnclassed}, so this policy does not give them away.
   */
  holdUnclassed(seats: number): void {
    this.seats.holdUnclassed(seats);
  }

  releaseUnclassed(seats: number): void {
    this.seats.holdUnclassed(-seats);
  }

  /**
   * Carries a queued request of another core (a policy swap) into this core's queue of the same
   * class name, keeping its deadline and time of arrival, without checking the queue's bounds.
   * @returns the ticket of this core, or undefined when the class is not in this policy
   */
  adoptQueued(t: QueueTicket): QueueTicket | undefined {
    const c = this.policy.byName.get(t.className);
    if (c === undefined) return undefined;
    const seats = estimateSeats(c.estimator, t.cost, this.#factor[c.index]);
    this.#qCount[c.index]!++;
    this.#qCost[c.index]! += seats;
    return {
      classIndex: c.index,
      className: c.name,
      tenant: t.tenant,
      seats,
      cost: t.cost,
      deadlineMs: t.deadlineMs,
      enqueuedAtMs: t.enqueuedAtMs,
      idempotencyKey: t.idempotencyKey,
      left: false,
    };
  }

  /**
   * Whether `seats` more would fit class `i` now (quota aside): for the host's false-shed
   * judgement, same rules as a new request.
   */
  wouldFit(i: number, seats: number, cond: Conditions = HEALTHY): boolean {
    return this.seats.canTake(i, seats, this.#mayBorrow(i, cond));
  }
}
