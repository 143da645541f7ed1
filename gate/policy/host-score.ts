/**
 * The scorecard of a policy host (queue-is-a-policy.md, "Operate from a decision-complete
 * scorecard"): what the core counts at decision time (dispositions, reject reasons, reserve and
 * emergency use, estimator error) summed over every core a swap retired, and what only the host
 * sees: queue exits and ages, completions (useful on time, late, after disconnect), degraded
 * modes, the defer life cycle, false sheds, fairness and starvation, retry amplification and
 * recovery time. Bounded memory: tenants past {@link MAX_TENANTS_PER_CLASS} per class are counted
 * together, quantiles come from a fixed histogram, false-shed candidates are capped.
 * Definitions are in docs/policy.md ("The scorecard").
 */
import type { Clock } from '../clock.js';
import { AgeHistogram } from './age-histogram.js';
import type { Conditions, PolicyCore } from './decide.js';
import type { CostEstimate } from './estimator.js';
import { renderPolicyMetrics } from './host-metrics.js';
import type { ClassLine } from './host-queue.js';
import {
  addScores,
  type ClassSnapshot,
  emptyScore,
  type PolicySnapshot,
  type TenantSnapshot,
  zeroKinds,
} from './host-snapshot.js';
import type { DeferStoreSnapshot } from './host-store.js';
import type { DegradeOption } from './schema.js';
import {
  type ClassScore,
  DISPOSITIONS,
  MAX_TENANTS_PER_CLASS,
  OTHER_TENANTS,
  type RejectReason,
} from './scorecard.js';

export type { ClassSnapshot, PolicySnapshot, TenantSnapshot } from './host-snapshot.js';
export { addScores } from './host-snapshot.js';

/** Most rejected or expired requests watched at once for a false shed; past it they are counted unjudged. */
export const MAX_SHED_WATCH = 1024;

/** The store figures of a host whose store never failed. */
const NO_STORE_FAILURES: DeferStoreSnapshot = Object.freeze({
  failures: 0,
  refused_defers: 0,
  stopped_drains: 0,
  unrecorded_ends: 0,
});

/** How a waiter left its queue. */
export type QueueLeave = 'dispatched' | 'deadline' | 'max_age' | 'cancelled' | 'class_removed' | 'closed';
const LEAVES: readonly QueueLeave[] = [
  'dispatched',
  'deadline',
  'max_age',
  'cancelled',
  'class_removed',
  'closed',
];

/** Rejects that may be false sheds (capacity, not policy: quotas, duplicates and open dependencies are not). */
const SHED_REASONS: ReadonlySet<RejectReason> = new Set([
  'class_capacity',
  'queue_full',
  'deadline_impossible',
]);

/** The label of a degraded mode: `max_tokens:256`, `pool:small`. */
export function degradeModeLabel(m: DegradeOption): string {
  return m.kind === 'pool' ? `pool:${m.pool}` : `max_tokens:${m.max_output_tokens}`;
}

/** A starvation clock: the gaps without a dispatch while work waited. */
class Starve {
  from = Number.NaN;
  totalMs = 0;
  maxMs = 0;
  /** Work arrived in an empty queue. */
  start(now: number): void {
    if (Number.isNaN(this.from)) this.from = now;
  }
  /** A dispatch (or the queue emptied): the gap ends; a new one starts if work still waits. */
  stop(now: number, stillWaiting: boolean): void {
    if (!Number.isNaN(this.from)) {
      const gap = now - this.from;
      this.totalMs += gap;
      if (gap > this.maxMs) this.maxMs = gap;
    }
    this.from = stillWaiting ? now : Number.NaN;
  }
  /** Total and max including the gap still open at `now`. */
  read(now: number): { total: number; max: number } {
    if (Number.isNaN(this.from)) return { total: this.totalMs, max: this.maxMs };
    const open = now - this.from;
    return { total: this.totalMs + open, max: Math.max(this.maxMs, open) };
  }
}

/** Counters of one tenant in one class (host side); a lease keeps its own to end without a lookup. */
export class TenantAcc {
  readonly cls: ClassAcc;
  constructor(cls: ClassAcc) {
    this.cls = cls;
  }
  enqueued = 0;
  dispatched = 0;
  cancelled = 0;
  completed = 0;
  usefulOnTime = 0;
  seatsGranted = 0;
  falseShed = 0;
  readonly starve = new Starve();
}

/** Counters of one class (host side). */
export class ClassAcc {
  readonly leaves = new Array<number>(LEAVES.length).fill(0);
  enqueued = 0;
  completed = 0;
  failed = 0;
  cancelled = 0;
  usefulOnTime = 0;
  completedAfterDeadline = 0;
  completedAfterDisconnect = 0;
  readonly degraded = new Map<string, number>();
  drained = 0;
  deferExpired = 0;
  deferCancelled = 0;
  deferStoreFailures = 0;
  seatsGranted = 0;
  falseShed = 0;
  trueShed = 0;
  estimatedTokens = 0;
  actualTokens = 0;
  reconciledTokens = 0;
  readonly queueAge = new AgeHistogram();
  readonly deferAge = new AgeHistogram();
  readonly duration = new AgeHistogram();
  /** Σ seats × duration, seat-ms held. */
  seatMs = 0;
  readonly starve = new Starve();
  readonly tenants = new Map<string, TenantAcc>();

  tenant(name: string): TenantAcc {
    let t = this.tenants.get(name);
    if (t === undefined) {
      const key = this.tenants.size < MAX_TENANTS_PER_CLASS ? name : OTHER_TENANTS;
      t = this.tenants.get(key);
      if (t === undefined) {
        t = new TenantAcc(this);
        this.tenants.set(key, t);
      }
    }
    return t;
  }
}

interface ShedWatch {
  readonly className: string;
  readonly tenant: string;
  readonly seats: number;
  readonly deadlineMs: number;
}

/** What a completed lease tells the scorecard. */
export interface CompletedLease {
  readonly seats: number;
  readonly deadlineMs: number;
  readonly admittedAtMs: number;
  readonly maxOutputTokens: number | undefined;
}

/** What the host reports with a completion (see host.ts `Completion`). */
export interface CompletionReport {
  readonly outcome: 'completed' | 'failed' | 'cancelled';
  readonly clientConnected?: boolean;
  readonly useful?: boolean;
  readonly actual?: { readonly promptTokens: number; readonly outputTokens: number };
}

/** The host's scorecard. */
export class HostScore {
  readonly #clock: Clock;
  /** The policy in force's `recovery.queue_depth` (a swap brings its own). */
  #recoveryDepth = 0;
  readonly #classes = new Map<string, ClassAcc>();
  /** By class index of the core in force (see {@link bind}). */
  #byIndex: ClassAcc[] = [];
  readonly #retired = new Map<string, ClassScore>();
  #swaps = 0;
  #watch: ShedWatch[] = [];
  #unjudged = 0;
  #state: 'healthy' | 'unhealthy' | 'recovering' = 'healthy';
  #since = 0;
  #unhealthyPeriods = 0;
  #unhealthyMs = 0;
  #recoveries = 0;
  #lastRecovery: number | null = null;
  #maxRecovery: number | null = null;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Binds the class accumulators to the indices of `core` (at start and after each swap). */
  bind(core: PolicyCore): void {
    this.#recoveryDepth = core.policy.recoveryQueueDepth;
    this.#byIndex = core.policy.classes.map((c) => this.#c(c.name));
  }

  #c(name: string): ClassAcc {
    let c = this.#classes.get(name);
    if (c === undefined) {
      c = new ClassAcc();
      this.#classes.set(name, c);
    }
    return c;
  }

  /** Whether rejected or expired requests are watched for a false shed (the host pumps on release then). */
  get watchingShed(): boolean {
    return this.#watch.length > 0;
  }

  enqueued(cls: string, tenant: string, now: number, classWaiting: number, tenantWaiting: number): void {
    const c = this.#c(cls);
    c.enqueued++;
    const t = c.tenant(tenant);
    t.enqueued++;
    if (classWaiting === 1) c.starve.start(now);
    if (tenantWaiting === 1) t.starve.start(now);
  }

  left(
    cls: string,
    tenant: string,
    now: number,
    ageMs: number,
    how: QueueLeave,
    classWaiting: number,
    tenantWaiting: number,
  ): void {
    const c = this.#c(cls);
    c.leaves[LEAVES.indexOf(how)]!++;
    c.queueAge.note(ageMs);
    const t = c.tenant(tenant);
    if (how === 'dispatched') {
      t.dispatched++;
      c.starve.stop(now, classWaiting > 0);
      t.starve.stop(now, tenantWaiting > 0);
      return;
    }
    if (how === 'cancelled') {
      t.cancelled++;
      c.cancelled++;
    }
    // No dispatch: the gap goes on while others wait, and closes when the queue emptied.
    if (classWaiting === 0) c.starve.stop(now, false);
    if (tenantWaiting === 0) t.starve.stop(now, false);
  }

  degraded(cls: string, _tenant: string, mode: DegradeOption): void {
    const m = this.#c(cls).degraded;
    const k = degradeModeLabel(mode);
    m.set(k, (m.get(k) ?? 0) + 1);
  }

  drained(cls: string, tenant: string, seats: number, waitedMs: number): void {
    const c = this.#c(cls);
    c.drained++;
    c.deferAge.note(waitedMs);
    void tenant;
    void seats;
  }

  deferEnded(cls: string, _tenant: string, how: 'expired' | 'cancelled'): void {
    const c = this.#c(cls);
    if (how === 'expired') c.deferExpired++;
    else c.deferCancelled++;
  }

  deferStoreFailed(cls: string): void {
    this.#c(cls).deferStoreFailures++;
  }

  /**
   * Seats granted to a tenant of class index `i` (admit, dispatch, degrade, drain), for the
   * fairness share. @returns the tenant's counters, for the lease to end with
   */
  granted(i: number, tenant: string, seats: number): TenantAcc {
    const c = this.#byIndex[i]!;
    const t = c.tenant(tenant);
    c.seatsGranted += seats;
    t.seatsGranted += seats;
    return t;
  }

  /** The tenant counters of a class by name (a lease with no grant: a fallback pool). */
  tenantOf(cls: string, tenant: string): TenantAcc {
    return this.#c(cls).tenant(tenant);
  }

  completed(l: CompletedLease, t: TenantAcc, done: CompletionReport, now: number): void {
    const c = t.cls;
    const dur = now - l.admittedAtMs;
    c.duration.note(dur);
    c.seatMs += l.seats * dur;
    if (done.outcome === 'cancelled') {
      c.cancelled++;
      t.cancelled++;
      return;
    }
    if (done.outcome === 'failed') {
      c.failed++;
      return;
    }
    c.completed++;
    t.completed++;
    const connected = done.clientConnected !== false;
    const onTime = now <= l.deadlineMs;
    if (!onTime) c.completedAfterDeadline++;
    if (!connected) c.completedAfterDisconnect++;
    if (onTime && connected && done.useful !== false) {
      c.usefulOnTime++;
      t.usefulOnTime++;
    }
    const a = done.actual;
    if (a !== undefined && l.maxOutputTokens !== undefined) {
      c.reconciledTokens++;
      c.actualTokens += a.promptTokens + a.outputTokens;
      c.estimatedTokens += a.promptTokens + l.maxOutputTokens;
    }
  }

  /** A reject that may be a false shed: watched until its deadline. */
  shed(
    core: PolicyCore,
    cls: string,
    tenant: string,
    reason: RejectReason,
    deadlineMs: number,
    now: number,
    cost: CostEstimate,
  ): void {
    if (!SHED_REASONS.has(reason)) return;
    if (!core.policy.byName.has(cls)) return;
    const seats = core.seatsFor(cls, cost);
    this.#addWatch({ className: cls, tenant, seats, deadlineMs }, now);
  }

  /** A waiter that expired (or a swap removed): a false shed when seats free up before its deadline. */
  expiredShed(
    _core: PolicyCore,
    cls: string,
    tenant: string,
    seats: number,
    deadlineMs: number,
    now: number,
  ): void {
    this.#addWatch({ className: cls, tenant, seats, deadlineMs }, now);
  }

  #addWatch(w: ShedWatch, now: number): void {
    if (now >= w.deadlineMs) {
      this.#c(w.className).trueShed++;
      return;
    }
    if (this.#watch.length >= MAX_SHED_WATCH) {
      this.#unjudged++;
      return;
    }
    this.#watch.push(w);
  }

  /**
   * Judges the watched sheds at a moment seats may have freed: a shed whose seats now fit its
   * class (same rules as a new request, quota aside) before its deadline is a false shed; one
   * whose deadline passed without that is a true shed.
   */
  judgeShed(core: PolicyCore, now: number, cond: Conditions): void {
    const w = this.#watch;
    if (w.length === 0) return;
    let k = 0;
    for (let j = 0; j < w.length; j++) {
      const s = w[j]!;
      const c = core.policy.byName.get(s.className);
      if (now >= s.deadlineMs || c === undefined) {
        this.#c(s.className).trueShed++;
        continue;
      }
      if (core.wouldFit(c.index, s.seats, cond)) {
        const acc = this.#c(s.className);
        acc.falseShed++;
        acc.tenant(s.tenant).falseShed++;
        continue;
      }
      w[k++] = s;
    }
    w.length = k;
  }

  /** The system's health and backlog at `now`: unhealthy periods and recovery time. */
  observe(healthy: boolean, now: number, waiting: number, deferPending: number): void {
    if (this.#state === 'healthy') {
      if (healthy) return;
      this.#state = 'unhealthy';
      this.#since = now;
      this.#unhealthyPeriods++;
      return;
    }
    if (this.#state === 'unhealthy') {
      if (!healthy) return;
      this.#unhealthyMs += now - this.#since;
      this.#state = 'recovering';
      this.#since = now;
    } else if (!healthy) {
      this.#state = 'unhealthy';
      this.#since = now;
      this.#unhealthyPeriods++;
      return;
    }
    if (waiting <= this.#recoveryDepth && deferPending === 0) {
      const ms = now - this.#since;
      this.#recoveries++;
      this.#lastRecovery = ms;
      this.#maxRecovery = this.#maxRecovery === null ? ms : Math.max(this.#maxRecovery, ms);
      this.#state = 'healthy';
    }
  }

  /** A core leaves (a swap): its decision counters are kept by class name. */
  retire(core: PolicyCore): void {
    this.#swaps++;
    for (const [name, s] of Object.entries(core.score.snapshot())) {
      const prev = this.#retired.get(name);
      this.#retired.set(name, prev === undefined ? s : addScores(prev, s));
    }
  }

  /** The snapshot of every class seen by the core in force or a retired one. */
  snapshot<C>(
    core: PolicyCore,
    lines: readonly ClassLine<C>[],
    deferPending: number,
    deferStore: DeferStoreSnapshot = NO_STORE_FAILURES,
  ): PolicySnapshot {
    const now = this.#clock.now();
    const live = core.score.snapshot();
    const backlog = new Map<string, number>();
    for (const c of core.policy.classes) backlog.set(c.name, core.defers.backlog(c.index));
    const names = new Set<string>([...Object.keys(live), ...this.#retired.keys(), ...this.#classes.keys()]);
    const scores = new Map<string, ClassScore>();
    for (const n of names) {
      const a = live[n];
      const b = this.#retired.get(n);
      scores.set(n, a && b ? addScores(a, b) : (a ?? b ?? emptyScore()));
    }
    let allGranted = 0;
    for (const n of names) allGranted += this.#classes.get(n)?.seatsGranted ?? 0;
    const classes: Record<string, ClassSnapshot> = {};
    const totals = {
      offered: 0,
      admitted: 0,
      queued: 0,
      degraded: 0,
      deferred: 0,
      rejected: 0,
      cancelled: 0,
      completed: 0,
      useful_on_time: 0,
      false_shed: 0,
      queue_depth: 0,
      defer_backlog: deferPending,
    };
    for (const n of [...names].sort()) {
      const s = scores.get(n)!;
      const a = this.#c(n);
      const pc = core.policy.byName.get(n);
      const line = pc === undefined ? undefined : lines[pc.index];
      const oldest = line?.oldestEnqueuedAtMs();
      const st = a.starve.read(now);
      const tenants: Record<string, TenantSnapshot> = {};
      const tnames = new Set<string>([...Object.keys(s.tenants), ...a.tenants.keys()]);
      for (const t of [...tnames].sort()) {
        const d = s.tenants[t] ?? zeroKinds();
        const ta = a.tenants.get(t) ?? new TenantAcc(a);
        const tst = ta.starve.read(now);
        tenants[t] = {
          offered: DISPOSITIONS.reduce((x, k) => x + d[k], 0),
          admitted: d.admit,
          queued: d.queue,
          degraded: d.degrade,
          deferred: d.defer,
          rejected: d.reject,
          dispatched: ta.dispatched,
          cancelled: ta.cancelled,
          completed: ta.completed,
          useful_on_time: ta.usefulOnTime,
          seats_granted: ta.seatsGranted,
          fairness_share: a.seatsGranted === 0 ? 0 : round6(ta.seatsGranted / a.seatsGranted),
          starvation_ms_total: tst.total,
          starvation_ms_max: tst.max,
          false_shed: ta.falseShed,
        };
      }
      const L = (k: QueueLeave): number => a.leaves[LEAVES.indexOf(k)]!;
      const cs: ClassSnapshot = {
        offered: s.offered,
        admitted: s.dispositions.admit,
        queued: s.dispositions.queue,
        degraded: s.dispositions.degrade,
        degraded_by_mode: Object.fromEntries([...a.degraded].sort(([x], [y]) => (x < y ? -1 : 1))),
        deferred: s.dispositions.defer,
        rejected: s.dispositions.reject,
        rejected_by_reason: { ...s.rejected },
        dispatched: L('dispatched'),
        expired_deadline: L('deadline'),
        expired_max_age: L('max_age'),
        removed_by_swap: L('class_removed'),
        closed: L('closed'),
        cancelled: a.cancelled,
        completed: a.completed,
        failed: a.failed,
        useful_on_time: a.usefulOnTime,
        completed_after_deadline: a.completedAfterDeadline,
        completed_after_disconnect: a.completedAfterDisconnect,
        drained: a.drained,
        defer_expired: a.deferExpired,
        defer_cancelled: a.deferCancelled,
        defer_store_failures: a.deferStoreFailures,
        defer_backlog: backlog.get(n) ?? 0,
        queue_depth: line?.size ?? 0,
        queue_cost_seats: line?.costSeats ?? 0,
        queue_oldest_ms: oldest === undefined ? 0 : now - oldest,
        queue_age_ms: hist(a.queueAge),
        defer_wait_ms: hist(a.deferAge),
        seats_in_use: pc === undefined ? 0 : core.seats.used(pc.index),
        seats_granted: a.seatsGranted,
        fairness_share: allGranted === 0 ? 0 : round6(a.seatsGranted / allGranted),
        starvation_ms_total: st.total,
        starvation_ms_max: st.max,
        false_shed: a.falseShed,
        true_shed: a.trueShed,
        reserve_admits: s.reserveAdmits,
        emergency_admits: s.emergencyAdmits,
        estimator: {
          reconciled: s.estimator.reconciled,
          seat_error_sum: s.estimator.seatErrorSum,
          seat_error_abs_sum: s.estimator.seatErrorAbsSum,
          underestimated: s.estimator.underestimated,
          output_token_error_sum: s.estimator.outputTokenErrorSum,
          estimated_tokens: a.estimatedTokens,
          actual_tokens: a.actualTokens,
          duration_ms: hist(a.duration),
          seat_ms: a.seatMs,
          correction_factor: pc === undefined ? 1 : round6(core.estimatorCorrection(n).factor),
          correction_samples: pc === undefined ? 0 : core.estimatorCorrection(n).samples,
        },
        tenants,
      };
      classes[n] = cs;
      totals.offered += cs.offered;
      totals.admitted += cs.admitted;
      totals.queued += cs.queued;
      totals.degraded += cs.degraded;
      totals.deferred += cs.deferred;
      totals.rejected += cs.rejected;
      totals.cancelled += cs.cancelled;
      totals.completed += cs.completed;
      totals.useful_on_time += cs.useful_on_time;
      totals.false_shed += cs.false_shed;
      totals.queue_depth += cs.queue_depth;
    }
    const r = core.intents;
    const attempts = r.firsts + r.retries;
    let reserveAdmits = 0;
    for (const c of Object.values(classes)) reserveAdmits += c.reserve_admits;
    let emergencyUses = 0;
    for (const c of Object.values(classes)) emergencyUses += c.emergency_admits;
    return {
      at_ms: now,
      policy_swaps: this.#swaps,
      classes,
      totals,
      retry: {
        intents: r.firsts,
        attempts,
        retries: r.retries,
        duplicates: r.duplicates,
        blocked: r.blocked,
        amplification: r.firsts === 0 ? 0 : round6(attempts / r.firsts),
      },
      reserve: { seats: core.policy.reserveSeats, in_use: core.seats.reserveUsed, admits: reserveAdmits },
      emergency: {
        max_seats: core.policy.emergency?.maxSeats ?? 0,
        in_use: core.seats.emergencyUsed,
        uses: emergencyUses,
      },
      false_shed: { total: totals.false_shed, watching: this.#watch.length, unjudged: this.#unjudged },
      defer_store: { ...deferStore },
      recovery: {
        state: this.#state,
        queue_depth_threshold: this.#recoveryDepth,
        unhealthy_periods: this.#unhealthyPeriods,
        unhealthy_ms: this.#unhealthyMs + (this.#state === 'unhealthy' ? now - this.#since : 0),
        recoveries: this.#recoveries,
        last_ms: this.#lastRecovery,
        max_ms: this.#maxRecovery,
      },
    };
  }

  /** The snapshot in the Prometheus text exposition format. */
  prometheus(s: PolicySnapshot): string {
    return renderPolicyMetrics(s);
  }
}

function hist(h: AgeHistogram): { count: number; p50: number; p95: number; max: number; mean: number } {
  return {
    count: h.count,
    p50: round6(h.quantile(0.5)),
    p95: round6(h.quantile(0.95)),
    max: round6(h.maxMs),
    mean: h.count === 0 ? 0 : round6(h.sumMs / h.count),
  };
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
