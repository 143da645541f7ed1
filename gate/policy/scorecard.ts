/**
 * The policy's scorecard as counters: dispositions by class (and reject reasons), estimator error
 * reconciled at release, reserve and emergency use with an audit record of each emergency use.
 * Plain numbers only; exporting them (summary.json, /metrics) is the host's job.
 */

/** The five dispositions. */
export const DISPOSITIONS = ['admit', 'queue', 'degrade', 'defer', 'reject'] as const;
export type DispositionKind = (typeof DISPOSITIONS)[number];

/** Why a request was rejected: the essay's five, and two about retries of one intent. */
export const REJECT_REASONS = [
  'tenant_quota',
  'class_capacity',
  'dependency_open',
  'deadline_impossible',
  'queue_full',
  'duplicate_intent',
  'retry_budget',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** One use of the emergency lane. */
export interface EmergencyUse {
  readonly atMs: number;
  readonly className: string;
  readonly tenant: string;
  readonly seats: number;
  /** What made the request eligible, e.g. `claim sluice_emergency` or `tenant list`. */
  readonly eligibleBy: string;
}

/** Tenants counted by name per class; the rest are counted together under {@link OTHER_TENANTS}. */
export const MAX_TENANTS_PER_CLASS = 4096;
/** The name under which tenants past {@link MAX_TENANTS_PER_CLASS} are counted. */
export const OTHER_TENANTS = '(other)';

/** Most emergency uses kept in the audit record (the count goes on). */
export const MAX_EMERGENCY_AUDIT = 1024;

/** Estimator error of one class: estimated minus actual seats, and output tokens. */
export interface EstimatorError {
  readonly reconciled: number;
  /** Σ (estimated − actual) seats: positive when the estimator overestimates. */
  readonly seatErrorSum: number;
  readonly seatErrorAbsSum: number;
  /** Requests that used more seats than estimated. */
  readonly underestimated: number;
  /** Σ (max output tokens − actual output tokens). */
  readonly outputTokenErrorSum: number;
}

/** A snapshot of one class's counters. */
export interface ClassScore {
  readonly offered: number;
  readonly dispositions: Readonly<Record<DispositionKind, number>>;
  readonly rejected: Readonly<Record<RejectReason, number>>;
  readonly reserveAdmits: number;
  readonly emergencyAdmits: number;
  readonly estimator: EstimatorError;
  /** Dispositions by tenant (offered = their sum). */
  readonly tenants: Readonly<Record<string, Readonly<Record<DispositionKind, number>>>>;
}

const NK = DISPOSITIONS.length;
const NR = REJECT_REASONS.length;
const KIND_INDEX: Record<DispositionKind, number> = { admit: 0, queue: 1, degrade: 2, defer: 3, reject: 4 };
const REASON_INDEX = Object.fromEntries(REJECT_REASONS.map((r, i) => [r, i])) as Record<RejectReason, number>;

/** Counters of one policy. */
export class Scorecard {
  readonly #names: readonly string[];
  readonly #offered: number[];
  readonly #kinds: number[];
  readonly #reasons: number[];
  readonly #reserve: number[];
  readonly #emergency: number[];
  /** Per class: reconciled, seatErr, seatAbs, under, tokErr. */
  readonly #est: number[];
  /** Per class: tenant → dispositions counted in DISPOSITIONS order. */
  readonly #tenants: Map<string, number[]>[];
  readonly #audit: EmergencyUse[] = [];
  #auditNext = 0;
  emergencyUses = 0;

  constructor(classNames: readonly string[]) {
    const n = classNames.length;
    this.#names = classNames;
    this.#offered = new Array<number>(n).fill(0);
    this.#kinds = new Array<number>(n * NK).fill(0);
    this.#reasons = new Array<number>(n * NR).fill(0);
    this.#reserve = new Array<number>(n).fill(0);
    this.#emergency = new Array<number>(n).fill(0);
    this.#est = new Array<number>(n * 5).fill(0);
    this.#tenants = classNames.map(() => new Map<string, number[]>());
  }

  /** Counts a disposition for a tenant of class `i`. */
  tenant(i: number, tenant: string, kind: DispositionKind): void {
    const m = this.#tenants[i]!;
    let row = m.get(tenant);
    if (row === undefined) {
      const name = m.size < MAX_TENANTS_PER_CLASS ? tenant : OTHER_TENANTS;
      row = m.get(name);
      if (row === undefined) {
        row = [0, 0, 0, 0, 0];
        m.set(name, row);
      }
    }
    row[KIND_INDEX[kind]]!++;
  }

  offered(i: number): void {
    this.#offered[i]!++;
  }
  disposition(i: number, kind: DispositionKind): void {
    this.#kinds[i * NK + KIND_INDEX[kind]]!++;
  }
  rejected(i: number, reason: RejectReason): void {
    this.#kinds[i * NK + 4]!++;
    this.#reasons[i * NR + REASON_INDEX[reason]]!++;
  }
  /**
   * A disposition the host could not carry out (a defer store that refused the item) becomes a
   * reject: one count moves from `from` to `reject` with `reason`, for the class and the tenant.
   */
  recount(i: number, tenant: string, from: DispositionKind, reason: RejectReason): void {
    this.#kinds[i * NK + KIND_INDEX[from]]!--;
    this.rejected(i, reason);
    const m = this.#tenants[i]!;
    const row = m.get(tenant) ?? m.get(OTHER_TENANTS);
    if (row !== undefined) {
      row[KIND_INDEX[from]]!--;
      row[4]!++;
    }
  }

  reserveAdmit(i: number): void {
    this.#reserve[i]!++;
  }
  emergencyAdmit(i: number, use: EmergencyUse): void {
    this.#emergency[i]!++;
    this.emergencyUses++;
    if (this.#audit.length < MAX_EMERGENCY_AUDIT) this.#audit.push(use);
    else {
      this.#audit[this.#auditNext] = use;
      this.#auditNext = (this.#auditNext + 1) % MAX_EMERGENCY_AUDIT;
    }
  }
  reconciled(i: number, estimatedSeats: number, actualSeats: number, outputTokenError: number): void {
    const b = i * 5;
    const e = estimatedSeats - actualSeats;
    this.#est[b]!++;
    this.#est[b + 1]! += e;
    this.#est[b + 2]! += Math.abs(e);
    if (e < 0) this.#est[b + 3]!++;
    this.#est[b + 4]! += outputTokenError;
  }

  /** The emergency audit record, oldest first (the last {@link MAX_EMERGENCY_AUDIT} uses). */
  emergencyAudit(): EmergencyUse[] {
    return [...this.#audit.slice(this.#auditNext), ...this.#audit.slice(0, this.#auditNext)];
  }

  /** The counters of every class, by name. */
  snapshot(): Record<string, ClassScore> {
    const out: Record<string, ClassScore> = {};
    this.#names.forEach((name, i) => {
      const kinds = Object.fromEntries(DISPOSITIONS.map((k, j) => [k, this.#kinds[i * NK + j]!]));
      const reasons = Object.fromEntries(REJECT_REASONS.map((r, j) => [r, this.#reasons[i * NR + j]!]));
      const b = i * 5;
      const tenants: Record<string, Record<DispositionKind, number>> = {};
      for (const [t, row] of this.#tenants[i]!)
        tenants[t] = Object.fromEntries(DISPOSITIONS.map((k, j) => [k, row[j]!])) as Record<
          DispositionKind,
          number
        >;
      out[name] = {
        offered: this.#offered[i]!,
        dispositions: kinds as Record<DispositionKind, number>,
        rejected: reasons as Record<RejectReason, number>,
        reserveAdmits: this.#reserve[i]!,
        emergencyAdmits: this.#emergency[i]!,
        estimator: {
          reconciled: this.#est[b]!,
          seatErrorSum: this.#est[b + 1]!,
          seatErrorAbsSum: this.#est[b + 2]!,
          underestimated: this.#est[b + 3]!,
          outputTokenErrorSum: this.#est[b + 4]!,
        },
        tenants,
      };
    });
    return out;
  }
}
