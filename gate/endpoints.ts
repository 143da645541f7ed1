/**
 * Endpoint state on a pool: role, weight, health, units held, the warm-up
 * ramp after a return to service, the last engine telemetry, and the choice
 * of an endpoint among the healthy ones with room (smooth weighted
 * round-robin, so weights are honoured deterministically).
 */

/** The role an endpoint serves: a normal engine, or one side of a P/D pair. */
export type EndpointRole = 'normal' | 'prefill' | 'decode';
export const ENDPOINT_ROLES: readonly EndpointRole[] = ['normal', 'prefill', 'decode'];

export class EndpointState {
  healthy = true;
  /** Units held on this endpoint. */
  inflight = 0;
  /** When the current warm-up began (ms); -Infinity when none is running. */
  warmStartMs = Number.NEGATIVE_INFINITY;
  /** Smooth weighted round-robin accumulator. */
  cw = 0;
  /** Last scraped `vllm:num_requests_waiting`, and when it was read (ms). */
  waiting = 0;
  waitingAtMs = Number.NEGATIVE_INFINITY;
  /** Moving average of time to first token (ms), and when its last sample came (ms). */
  ttftEwmaMs = Number.NaN;
  ttftAtMs = Number.NEGATIVE_INFINITY;

  /**
   * @param id `IP:port` of the endpoint
   * @param weight relative share of new requests; 0 never receives one
   */
  constructor(
    readonly id: string,
    readonly role: EndpointRole,
    readonly weight: number,
  ) {}
}

/**
 * The per-endpoint ceiling in force at `nowMs`: the configured one, or during
 * warm-up a quarter of it (at least 1) rising linearly to all of it at the
 * window's end. 0 (unlimited) stays unlimited.
 */
export function endpointCap(ep: EndpointState, baseCap: number, warmupMs: number, nowMs: number): number {
  if (baseCap === 0 || warmupMs <= 0) return baseCap;
  const elapsed = nowMs - ep.warmStartMs;
  if (elapsed >= warmupMs || elapsed < 0) return baseCap;
  const floor = Math.max(1, Math.floor(baseCap / 4));
  return floor + Math.floor(((baseCap - floor) * elapsed) / warmupMs);
}

/** True while `ep` is inside its warm-up window. */
export function isWarming(ep: EndpointState, warmupMs: number, nowMs: number): boolean {
  return warmupMs > 0 && nowMs >= ep.warmStartMs && nowMs - ep.warmStartMs < warmupMs;
}

/** What a look for an endpoint found. */
export const PICK_NONE_HEALTHY = 0;
export const PICK_ALL_FULL = 1;

/**
 * Picks a healthy endpoint of `role` with room, preferring `preferred` when it
 * has room, else by smooth weighted round-robin.
 * @returns the endpoint, or PICK_NONE_HEALTHY / PICK_ALL_FULL
 */
export function pickEndpoint(
  eps: readonly EndpointState[],
  role: EndpointRole,
  capOf: (ep: EndpointState) => number,
  preferred: string | undefined,
  ignoreRoom = false,
): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
  let anyHealthy = false;
  let total = 0;
  let best: EndpointState | null = null;
  if (preferred !== undefined) {
    for (const ep of eps) {
      if (ep.id === preferred && ep.role === role && ep.healthy) {
        const cap = capOf(ep);
        if (ignoreRoom || cap === 0 || ep.inflight < cap) return ep;
      }
    }
  }
  for (const ep of eps) {
    if (ep.role !== role || !ep.healthy) continue;
    anyHealthy = true;
    if (ep.weight <= 0) continue;
    const cap = capOf(ep);
    if (!ignoreRoom && cap !== 0 && ep.inflight >= cap) continue;
    ep.cw += ep.weight;
    total += ep.weight;
    if (best === null || ep.cw > best.cw) best = ep;
  }
  if (best === null) return anyHealthy ? PICK_ALL_FULL : PICK_NONE_HEALTHY;
  best.cw -= total;
  return best;
}

/**
 * {@link pickEndpoint} with each endpoint's ceiling `endpointCap(ep, baseCap, warmupMs, nowMs)`
 * (`baseCap` being the ceiling of `role`): the same choice and the same round-robin state, for
 * the admission path, without a callback per endpoint.
 */
export function pickEndpointAt(
  eps: readonly EndpointState[],
  role: EndpointRole,
  baseCap: number,
  warmupMs: number,
  nowMs: number,
  preferred: string | undefined,
): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
  // With no warm-up the ceiling is baseCap for every endpoint.
  const flat = baseCap === 0 || warmupMs <= 0;
  if (preferred !== undefined) {
    for (let i = 0; i < eps.length; i++) {
      const ep = eps[i] as EndpointState;
      if (ep.id === preferred && ep.role === role && ep.healthy) {
        const cap = flat ? baseCap : endpointCap(ep, baseCap, warmupMs, nowMs);
        if (cap === 0 || ep.inflight < cap) return ep;
      }
    }
  }
  let anyHealthy = false;
  let total = 0;
  let best: EndpointState | null = null;
  for (let i = 0; i < eps.length; i++) {
    const ep = eps[i] as EndpointState;
    if (ep.role !== role || !ep.healthy) continue;
    anyHealthy = true;
    if (ep.weight <= 0) continue;
    const cap = flat ? baseCap : endpointCap(ep, baseCap, warmupMs, nowMs);
    if (cap !== 0 && ep.inflight >= cap) continue;
    ep.cw += ep.weight;
    total += ep.weight;
    if (best === null || ep.cw > best.cw) best = ep;
  }
  if (best === null) return anyHealthy ? PICK_ALL_FULL : PICK_NONE_HEALTHY;
  best.cw -= total;
  return best;
}
