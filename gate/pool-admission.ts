/**
 * A pool's admission decision: bypass, admit, park, or refuse one request,
 * and in observe mode admit it while counting what enforce would have done.
 * Under enforce a newcomer queues behind any waiter that could run (no
 * barging past the queue); with a tenant share in force, only behind one
 * that could run now, so a tenant at its share holds nobody up.
 */
import type { Ceiling, DecisionReason } from './decisions.js';
import { type EndpointState, PICK_ALL_FULL, PICK_NONE_HEALTHY } from './endpoints.js';
import { Permit } from './permit.js';
import type { AdmissionRequest, Decision, ObserveNote, Pool, PoolOptions } from './pool.js';
import { roleCap, serviceFull } from './pool-ceilings.js';
import type { QueueService } from './pool-queue.js';
import { poolRefusal } from './pool-refusal.js';
import type { ObservedCeiling, PoolTelemetry } from './pool-telemetry.js';
import type { TenantSlot } from './tenants.js';

const EMPTY_KEY = '';

export class Admission {
  readonly #pool: Pool;
  readonly #o: PoolOptions;
  readonly #t: PoolTelemetry;
  readonly #queue: QueueService;

  constructor(pool: Pool, o: PoolOptions, t: PoolTelemetry, queue: QueueService) {
    this.#pool = pool;
    this.#o = o;
    this.#t = t;
    this.#queue = queue;
  }

  /** Decides one request. */
  admit(req: AdmissionRequest, context: unknown): Decision {
    const mode = this.#pool.cfg.mode;
    if (req.inference === false) {
      if (mode !== 'off') this.#t.count('bypass_non_inference');
      return { kind: 'bypass', endpoint: this.#anyEndpoint(req.preferredEndpoint), counted: mode !== 'off' };
    }
    if (mode === 'off')
      return { kind: 'bypass', endpoint: this.#anyEndpoint(req.preferredEndpoint), counted: false };
    if (mode === 'observe') return this.#admitObserve(req, context);
    return this.#admitEnforce(req, context);
  }

  #admitEnforce(req: AdmissionRequest, context: unknown): Decision {
    const pool = this.#pool;
    const o = this.#o;
    const now = o.clock.now();
    const bodyBuffered = req.bodyBuffered !== false;
    if (o.draining()) return this.#refuse('draining', bodyBuffered, 'service');
    const outside = o.workersOutsideGate === true;
    const pd = req.pd === true || outside;
    const share = pool.shareActive;
    const slot = this.#slot(req.tenant, share);

    let ep: EndpointState | null = null;
    let epFull = false;
    if (pd) {
      if (!outside && !pool.endpoints.some((e) => e.healthy && e.role !== 'normal')) {
        pool.tenants.release(slot);
        return this.#refuse('no_healthy_capacity', bodyBuffered, 'endpoint');
      }
    } else {
      const picked = pool.picker.pickAt(
        'normal',
        roleCap(pool.cfg, 'normal'),
        pool.cfg.warmupMs,
        now,
        req.preferredEndpoint,
      );
      if (picked === PICK_NONE_HEALTHY) {
        pool.tenants.release(slot);
        return this.#refuse('no_healthy_capacity', bodyBuffered, 'endpoint');
      }
      if (picked === PICK_ALL_FULL) epFull = true;
      else ep = picked;
    }
    const svcFull = serviceFull(pool, now);
    const tenantFull = share && slot.exec >= pool.tenantExecBound;
    const queueBlocks =
      pool.queue.length > 0 && (!share || (!svcFull && this.#queue.nextRunnable(now) !== null));

    if (!svcFull && !epFull && !tenantFull && !queueBlocks) {
      if (ep !== null) ep.inflight++;
      return {
        kind: 'admit',
        permit: this.#take(ep, slot, now, context, req.pd === true && !outside),
        observe: null,
      };
    }
    const ceiling: Ceiling = svcFull ? 'service' : epFull ? 'endpoint' : tenantFull ? 'tenant' : 'service';
    const mayWait = (req.protocol !== 'h2' || o.everyRequestMayWait === true) && pool.cfg.queueDepth > 0;
    if (mayWait) {
      if (pool.queue.length >= pool.cfg.queueDepth) {
        pool.tenants.release(slot);
        return this.#refuse('queue_full', bodyBuffered, ceiling);
      }
      if (slot.queued >= pool.tenantQueueBound) {
        pool.tenants.release(slot);
        return this.#refuse('tenant_share', bodyBuffered, 'tenant', undefined, true);
      }
      const ticket = this.#queue.park(now, slot, pd, bodyBuffered, req.preferredEndpoint, context);
      this.#t.count('queued');
      return { kind: 'queued', ticket };
    }
    pool.tenants.release(slot);
    return this.#refuse(
      tenantFull ? 'tenant_share' : 'capacity_shed',
      bodyBuffered,
      tenantFull ? 'tenant' : ceiling,
    );
  }

  #admitObserve(req: AdmissionRequest, context: unknown): Decision {
    const pool = this.#pool;
    const o = this.#o;
    const now = o.clock.now();
    const pd = req.pd === true || o.workersOutsideGate === true;
    const slot = this.#slot(req.tenant, pool.shareActive);
    const ceilings: Ceiling[] = [];
    if (pool.effective > 0 && pool.inflight >= pool.effective) ceilings.push('service');
    let ep: EndpointState | null = null;
    // With no healthy endpoint enforce answers 503 at once: that would be a shed, never a wait.
    let noneHealthy = false;
    if (pd) {
      noneHealthy =
        o.workersOutsideGate !== true && !pool.endpoints.some((e) => e.healthy && e.role !== 'normal');
      if (noneHealthy) ceilings.push('endpoint');
    } else {
      const picked = pool.picker.pickAt(
        'normal',
        roleCap(pool.cfg, 'normal'),
        pool.cfg.warmupMs,
        now,
        req.preferredEndpoint,
      );
      if (picked === PICK_NONE_HEALTHY || picked === PICK_ALL_FULL) {
        noneHealthy = picked === PICK_NONE_HEALTHY;
        ceilings.push('endpoint');
        const any = pool.picker.pickIgnoringRoom('normal', req.preferredEndpoint);
        ep = typeof any === 'object' ? any : (pool.endpoints.find((e) => e.role === 'normal') ?? null);
      } else ep = picked;
    }
    if (pool.shareActive && slot.exec >= pool.tenantExecBound) ceilings.push('tenant');
    let note: ObserveNote | null = null;
    if (ceilings.length > 0) {
      const wouldQueue =
        !noneHealthy && (req.protocol !== 'h2' || o.everyRequestMayWait === true) && pool.cfg.queueDepth > 0;
      const outcome = wouldQueue ? 'observe_would_queue' : 'observe_would_shed';
      for (const c of ceilings) this.#t.countObserved(outcome, c as ObservedCeiling);
      note = { outcome, ceilings };
    }
    if (ep !== null) ep.inflight++;
    return { kind: 'admit', permit: this.#take(ep, slot, now, context, false), observe: note };
  }

  /**
   * Takes the service and tenant units (the endpoint unit is taken by the caller) and counts the admission.
   * @param legsDecide a P/D request under enforce: its legs decide how it is counted (see `Permit.admitCountPending`)
   */
  #take(
    ep: EndpointState | null,
    slot: TenantSlot,
    now: number,
    context: unknown,
    legsDecide: boolean,
  ): Permit {
    const pool = this.#pool;
    pool.inflight++;
    pool.bucket?.take();
    slot.exec++;
    const p = new Permit(pool, true, ep, slot, now, context);
    if (legsDecide) p.admitCountPending = true;
    else this.#t.count('admitted');
    return p;
  }

  #slot(tenant: string | undefined, share: boolean): TenantSlot {
    const slot = this.#pool.tenants.slotFor(tenant ?? EMPTY_KEY);
    if (slot.overflow && share) this.#o.anomalies.tenant_table_full++;
    return slot;
  }

  #anyEndpoint(preferred: string | undefined): string | null {
    const picked = this.#pool.picker.pickIgnoringRoom('normal', preferred);
    return typeof picked === 'object' ? picked.id : null;
  }

  #refuse(
    reason: DecisionReason,
    bodyBuffered: boolean,
    ceiling: Ceiling,
    queuedMs?: number,
    queueBound = false,
  ): Decision {
    this.#t.count(reason);
    return {
      kind: 'refuse',
      refusal: poolRefusal(this.#pool, this.#o.clock, reason, bodyBuffered, ceiling, queuedMs, queueBound),
    };
  }
}
