/**
 * The units a pool's permits hold: giving them back (a release, or a turn the
 * host could not take), and P/D legs, each one unit on an endpoint of its role
 * under its request's service unit. Legs never wait: a refused leg ends its
 * request, and that refusal is its one count.
 */
import type { Refusal } from './decisions.js';
import { type EndpointState, PICK_NONE_HEALTHY } from './endpoints.js';
import { Leg, type Permit } from './permit.js';
import type { Pool, PoolOptions } from './pool.js';
import { capOf, roleCap, roleCapInForce } from './pool-ceilings.js';
import { poolRefusal } from './pool-refusal.js';
import type { PoolTelemetry } from './pool-telemetry.js';

/** Takes one unit off `ep`; an underflow is counted, never applied. */
export function decEndpoint(o: PoolOptions, ep: EndpointState): void {
  if (ep.inflight > 0) ep.inflight--;
  else o.anomalies.underflow++;
}

/** Gives back every unit `p` holds (its endpoint's, its open legs', the service and tenant units), waking nobody. */
export function giveBack(pool: Pool, o: PoolOptions, p: Permit): void {
  if (p.endpoint !== null) decEndpoint(o, p.endpoint);
  if (p.legs !== null) {
    for (const leg of p.legs) {
      if (!leg.closed) {
        leg.closed = true;
        decEndpoint(o, leg.endpoint);
      }
    }
  }
  if (pool.inflight > 0) pool.inflight--;
  else o.anomalies.underflow++;
  pool.bucket?.giveBack();
  const slot = p.slot;
  if (slot !== null) {
    if (slot.exec > 0) slot.exec--;
    else o.anomalies.underflow++;
    pool.tenants.release(slot);
  }
}

/** Opens a prefill or decode leg for `p` (see `Permit.openLeg`). */
export function openLeg(
  pool: Pool,
  o: PoolOptions,
  t: PoolTelemetry,
  p: Permit,
  role: 'prefill' | 'decode',
  preferred: string | undefined,
): Leg | Refusal {
  const now = o.clock.now();
  const cfg = pool.cfg;
  const observe = cfg.mode !== 'enforce';
  const picked = pool.picker.pickAt(role, roleCap(cfg, role), cfg.warmupMs, now, preferred);
  let ep: EndpointState;
  if (typeof picked === 'object') ep = picked;
  else if (observe) {
    t.countObserved('observe_would_shed', 'endpoint');
    const any = pool.picker.pickIgnoringRoom(role, preferred);
    if (typeof any !== 'object') return poolRefusal(pool, o.clock, 'no_healthy_capacity', true, 'endpoint');
    ep = any;
  } else {
    const reason = picked === PICK_NONE_HEALTHY ? 'no_healthy_capacity' : 'capacity_shed';
    // The request is answered with this refusal: that is its one count (it was not yet counted admitted).
    if (p.admitCountPending) {
      p.admitCountPending = false;
      t.count(reason);
    }
    return {
      ...poolRefusal(pool, o.clock, reason, true, 'endpoint'),
      headers: {
        inflight: pool.inflight,
        queued: pool.queue.length,
        limit: roleCapInForce(pool, role, o.clock.now()),
      },
    };
  }
  if (p.tracked && !p.released) ep.inflight++;
  const leg = new Leg(p, role, ep);
  if (!p.tracked || p.released) leg.closed = true;
  if (p.legs === null) p.legs = [leg];
  else p.legs.push(leg);
  if (role === 'decode' && p.admitCountPending) {
    p.admitCountPending = false;
    t.count('admitted');
  }
  return leg;
}

/** Closes a leg: its endpoint unit returns while its request still holds one. */
export function closeLeg(o: PoolOptions, leg: Leg): void {
  leg.closed = true;
  if (leg.permit.tracked && !leg.permit.released) decEndpoint(o, leg.endpoint);
}

/** Moves a leg to endpoint `to`, taking the new unit first (see `Leg.move`). */
export function moveLeg(pool: Pool, o: PoolOptions, leg: Leg, to: string): boolean {
  const now = o.clock.now();
  const target = pool.endpoints.find((e) => e.id === to && e.role === leg.role && e.healthy);
  if (target === undefined || target === leg.endpoint) return false;
  const cap = capOf(pool.cfg, target, now);
  if (pool.cfg.mode === 'enforce' && cap !== 0 && target.inflight >= cap) return false;
  target.inflight++;
  decEndpoint(o, leg.endpoint);
  leg.endpoint = target;
  return true;
}
