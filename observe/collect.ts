/**
 * What enforce would have done, gathered from an observe-mode run: the
 * would-be refusals per ceiling, over time and per tenant, and the in-flight
 * count each request met, from which the ceilings that would have shed
 * nothing (or at most a given share) follow. Memory is bounded by the
 * tenants and by at most MAX_BUCKETS time buckets, not by the trace.
 */
import type { Ceiling, Decision } from '../gate/index.js';
import type { RequestDescriptor } from '../sim/clients/request-factory.js';
import { KEYLESS_LABEL } from '../sim/clients/tenants.js';
import type { RunObserver } from '../sim/run/requests.js';

/** Ceilings an observe report counts. */
export const OBSERVED_CEILINGS = ['service', 'endpoint', 'tenant'] as const;
export type ObservedCeiling = (typeof OBSERVED_CEILINGS)[number];

/** Would-be refusals at one ceiling. */
export interface WouldCounts {
  /** Would have been refused at once (429). */
  shed: number;
  /** Would have waited in the queue. */
  queue: number;
}

export interface TenantObservation {
  tenant: string;
  offered: number;
  would_shed: number;
  would_queue: number;
}

export interface TimeBucket {
  /** Start of the bucket, s of replay time. */
  t_s: number;
  arrivals: number;
  would_shed: number;
  would_queue: number;
  /** Most requests executing at once that an arrival of this bucket saw (itself included). */
  peak_inflight: number;
}

/** Most time buckets kept; beyond this they are merged two by two. */
export const MAX_BUCKETS = 720;

interface TenantAcc {
  offered: number;
  shed: number;
  queue: number;
}

export class ObserveCollector implements RunObserver {
  arrivals = 0;
  /** Requests that at least one ceiling would have refused at once / parked. */
  wouldShed = 0;
  wouldQueue = 0;
  peakInflight = 0;
  readonly perCeiling: Record<ObservedCeiling, WouldCounts> = {
    service: { shed: 0, queue: 0 },
    endpoint: { shed: 0, queue: 0 },
    tenant: { shed: 0, queue: 0 },
  };
  /** How many arrivals met each in-flight count. */
  readonly #met = new Map<number, number>();
  readonly #tenants = new Map<string, TenantAcc>();
  #bucketS = 1;
  #buckets = new Map<number, TimeBucket>();

  decided(d: RequestDescriptor, decision: Decision, inflightBefore: number, nowMs: number): void {
    if (!d.inference || d.attempt !== 1) return;
    this.arrivals++;
    this.#met.set(inflightBefore, (this.#met.get(inflightBefore) ?? 0) + 1);
    const seen = inflightBefore + 1;
    if (seen > this.peakInflight) this.peakInflight = seen;
    const tenant = d.tenant ?? KEYLESS_LABEL;
    let t = this.#tenants.get(tenant);
    if (t === undefined) {
      t = { offered: 0, shed: 0, queue: 0 };
      this.#tenants.set(tenant, t);
    }
    t.offered++;
    const b = this.#bucket(nowMs / 1000);
    b.arrivals++;
    if (seen > b.peak_inflight) b.peak_inflight = seen;
    if (decision.kind !== 'admit' || decision.observe === null) return;
    const note = decision.observe;
    const shed = note.outcome === 'observe_would_shed';
    for (const c of note.ceilings as Ceiling[]) {
      if (c === 'service' || c === 'endpoint' || c === 'tenant') {
        if (shed) this.perCeiling[c].shed++;
        else this.perCeiling[c].queue++;
      }
    }
    if (shed) {
      this.wouldShed++;
      t.shed++;
      b.would_shed++;
    } else {
      this.wouldQueue++;
      t.queue++;
      b.would_queue++;
    }
  }

  #bucket(tS: number): TimeBucket {
    let start = Math.floor(tS / this.#bucketS) * this.#bucketS;
    let b = this.#buckets.get(start);
    if (b === undefined) {
      if (this.#buckets.size >= MAX_BUCKETS) {
        this.#coarsen();
        start = Math.floor(tS / this.#bucketS) * this.#bucketS;
        b = this.#buckets.get(start);
      }
      if (b === undefined) {
        b = { t_s: start, arrivals: 0, would_shed: 0, would_queue: 0, peak_inflight: 0 };
        this.#buckets.set(start, b);
      }
    }
    return b;
  }

  /** Doubles the bucket width, merging buckets two by two. */
  #coarsen(): void {
    this.#bucketS *= 2;
    const merged = new Map<number, TimeBucket>();
    for (const b of this.#buckets.values()) {
      const start = Math.floor(b.t_s / this.#bucketS) * this.#bucketS;
      const m = merged.get(start);
      if (m === undefined) merged.set(start, { ...b, t_s: start });
      else {
        m.arrivals += b.arrivals;
        m.would_shed += b.would_shed;
        m.would_queue += b.would_queue;
        m.peak_inflight = Math.max(m.peak_inflight, b.peak_inflight);
      }
    }
    this.#buckets = merged;
  }

  /** Width of the time buckets, s. */
  get bucketS(): number {
    return this.#bucketS;
  }

  /** Time buckets in time order. */
  overTime(): TimeBucket[] {
    return [...this.#buckets.values()].sort((a, b) => a.t_s - b.t_s);
  }

  /** Tenants by offered requests, then name. */
  tenants(): TenantObservation[] {
    return [...this.#tenants.entries()]
      .map(([tenant, a]) => ({ tenant, offered: a.offered, would_shed: a.shed, would_queue: a.queue }))
      .sort((a, b) => b.offered - a.offered || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  }

  /**
   * The smallest pool ceiling at which at most `share` of the arrivals would
   * have met a full pool (with no queue): an arrival that met `n` executing
   * requests is over a ceiling `c` when n >= c. Share 0 gives the ceiling that
   * sheds nothing, the peak in-flight.
   */
  ceilingForShare(share: number): number {
    const counts = [...this.#met.entries()].sort((a, b) => b[0] - a[0]);
    const allowed = Math.floor(share * this.arrivals + 1e-9);
    let over = 0;
    // Walk ceilings from the top: lowering the ceiling to c adds the arrivals that met c executing.
    let c = this.peakInflight;
    for (const [met, n] of counts) {
      if (over + n > allowed) break;
      over += n;
      c = met;
    }
    return Math.max(1, c);
  }
}
