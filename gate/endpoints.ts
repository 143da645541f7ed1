/**
 * Endpoint state on a pool: role, weight, health, units held, the warm-up
 * ramp after a return to service, the last engine telemetry, and the choice
 * of an endpoint among the healthy ones with room (smooth weighted
 * round-robin, so weights are honoured deterministically).
 */

/** The role an endpoint serves: a normal engine, or one side of a P/D pair. */
export type EndpointRole = 'normal' | 'prefill' | 'decode';
export const ENDPOINT_ROLES: readonly EndpointRole[] = ['normal', 'prefill', 'decode'];

/**
 * What keeps an index over endpoints (see `endpoint-ring.ts`): told of every change to the state a
 * pick reads, and the keeper of the round-robin accumulator while it watches.
 */
export interface EndpointWatcher {
  /** `inflight` of the endpoint at `slot` went from `before` to `after`. */
  inflightChanged(slot: number, before: number, after: number): void;
  /** `healthy` of the endpoint at `slot` changed. */
  healthChanged(slot: number, healthy: boolean): void;
  /** A warm-up began at `startMs` (ms), or the warm-up was cleared (-Infinity). */
  warmStartChanged(startMs: number): void;
  /** The accumulator of the endpoint at `slot`. */
  cwOf(slot: number): number;
  /** Sets the accumulator of the endpoint at `slot`. */
  setCw(slot: number, cw: number): void;
  /** Hands every endpoint it watches back to itself (another watcher is taking one over). */
  detach(): void;
}

export class EndpointState {
  #healthy = true;
  #inflight = 0;
  #warmStartMs = Number.NEGATIVE_INFINITY;
  #cw = 0;
  /** Last scraped `vllm:num_requests_waiting`, and when it was read (ms). */
  waiting = 0;
  waitingAtMs = Number.NEGATIVE_INFINITY;
  /** Moving average of time to first token (ms), and when its last sample came (ms). */
  ttftEwmaMs = Number.NaN;
  ttftAtMs = Number.NEGATIVE_INFINITY;
  #watcher: EndpointWatcher | null = null;
  #slot = -1;

  /**
   * @param id `IP:port` of the endpoint
   * @param weight relative share of new requests; 0 never receives one
   */
  constructor(
    readonly id: string,
    readonly role: EndpointRole,
    readonly weight: number,
  ) {}

  /** In service (false after a failed health check). */
  get healthy(): boolean {
    return this.#healthy;
  }
  set healthy(v: boolean) {
    if (v === this.#healthy) return;
    this.#healthy = v;
    if (this.#watcher !== null) this.#watcher.healthChanged(this.#slot, v);
  }

  /** Units held on this endpoint. */
  get inflight(): number {
    return this.#inflight;
  }
  set inflight(v: number) {
    const before = this.#inflight;
    this.#inflight = v;
    if (this.#watcher !== null) this.#watcher.inflightChanged(this.#slot, before, v);
  }

  /** When the current warm-up began (ms); -Infinity when none is running. */
  get warmStartMs(): number {
    return this.#warmStartMs;
  }
  set warmStartMs(v: number) {
    this.#warmStartMs = v;
    if (this.#watcher !== null) this.#watcher.warmStartChanged(v);
  }

  /** Smooth weighted round-robin accumulator (kept by the watcher while one watches). */
  get cw(): number {
    return this.#watcher === null ? this.#cw : this.#watcher.cwOf(this.#slot);
  }
  set cw(v: number) {
    if (this.#watcher === null) this.#cw = v;
    else this.#watcher.setCw(this.#slot, v);
  }

  /** The current watcher, if any. */
  get watcher(): EndpointWatcher | null {
    return this.#watcher;
  }

  /**
   * Hands the endpoint to `watcher` as its `slot` (it then keeps `cw`), or with null back to
   * itself, taking `cw` (the accumulator's value at that moment) back.
   */
  watch(watcher: EndpointWatcher | null, slot: number, cw: number): void {
    this.#watcher = watcher;
    this.#slot = slot;
    this.#cw = cw;
  }
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
 * Picks a healthy endpoint of `role` with room under its ceiling `endpointCap(ep, baseCap,
 * warmupMs, nowMs)` (`baseCap` being the ceiling of `role`; 0: room is not looked at),
 * preferring `preferred` when it has room, else by smooth weighted round-robin. The walk that
 * gate/endpoint-ring.ts's heap reproduces, and falls back to.
 * @returns the endpoint, or PICK_NONE_HEALTHY / PICK_ALL_FULL
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
