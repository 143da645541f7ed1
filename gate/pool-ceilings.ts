/**
 * The ceilings in force on a pool: per-endpoint ceilings with their warm-up
 * ramp, the service ceiling (or SMG's token bucket), and the adaptive
 * ceiling's state across steps and in-place reconfigures. The pure step
 * itself is `adaptStep` in adaptive.ts; this file keeps the pool's side of it.
 */
import { type AdaptReason, type AdaptState, adaptStep, clampAdaptive, isAdapting } from './adaptive.js';
import type { TokenBucket } from './bucket.js';
import type { ResolvedConfig } from './config.js';
import { type EndpointRole, type EndpointState, endpointCap, isWarming } from './endpoints.js';

/** What of a pool its ceilings read and move (the pool's own public fields). */
export interface CeilingHolder {
  readonly cfg: ResolvedConfig;
  readonly endpoints: readonly EndpointState[];
  /** Executing requests holding a service unit. */
  readonly inflight: number;
  readonly bucket: TokenBucket | null;
  /** The service ceiling in force (adaptive while adapting; 0 = none). */
  effective: number;
  adaptState: AdaptState;
  adaptReason: AdaptReason;
  adaptMovesDown: number;
  adaptMovesUp: number;
}

/** The role ceiling configured for endpoints of `role` (0 = none). */
export function roleCap(cfg: ResolvedConfig, role: EndpointRole): number {
  return role === 'normal'
    ? cfg.epMaxInflight
    : role === 'prefill'
      ? cfg.prefillMaxInflight
      : cfg.decodeMaxInflight;
}

/** The ceiling in force on `ep` at `nowMs` (ms), warm-up included (0 = none). */
export function capOf(cfg: ResolvedConfig, ep: EndpointState, nowMs: number): number {
  return endpointCap(ep, roleCap(cfg, ep.role), cfg.warmupMs, nowMs);
}

/** The largest per-endpoint ceiling in force among healthy endpoints of `role` (warm-up included; 0 = none). */
export function roleCapInForce(p: CeilingHolder, role: EndpointRole, nowMs: number): number {
  let cap = 0;
  for (const ep of p.endpoints)
    if (ep.role === role && ep.healthy) cap = Math.max(cap, capOf(p.cfg, ep, nowMs));
  return cap === 0 ? roleCap(p.cfg, role) : cap;
}

/** Healthy endpoints with a role ceiling inside their warm-up window at `nowMs` (ms). */
export function warmingEndpoints(p: CeilingHolder, nowMs: number): number {
  let n = 0;
  for (const ep of p.endpoints)
    if (ep.healthy && roleCap(p.cfg, ep.role) > 0 && isWarming(ep, p.cfg.warmupMs, nowMs)) n++;
  return n;
}

/** True when no service unit is free at `nowMs`: the ceiling in force is reached, or the SMG bucket is empty. */
export function serviceFull(p: CeilingHolder, nowMs: number): boolean {
  if (p.bucket !== null) return !p.bucket.available(nowMs);
  return p.effective > 0 && p.inflight >= p.effective;
}

/** The adaptive state a pool starts in, or returns to when it stops adapting. */
export function resetAdaptState(p: CeilingHolder): void {
  p.adaptState = isAdapting(p.cfg) ? 'open' : 'off';
  p.adaptReason = 'none';
}

/** One adaptive step at `nowMs` (ms; called once a second); outside adapting, the configured ceiling. */
export function stepAdaptive(p: CeilingHolder, nowMs: number): void {
  const c = p.cfg;
  if (!isAdapting(c)) {
    p.effective = c.maxOutstanding;
    resetAdaptState(p);
    return;
  }
  const s = adaptStep({
    configured: c.maxOutstanding,
    effective: p.effective,
    ttftTargetMs: c.ttftTargetMs,
    staleMs: c.telemetryStaleMs,
    nowMs,
    endpoints: p.endpoints,
  });
  p.effective = s.effective;
  p.adaptState = s.state;
  p.adaptReason = s.reason;
  if (s.moved < 0) p.adaptMovesDown++;
  if (s.moved > 0) p.adaptMovesUp++;
}

/**
 * The ceilings after an in-place change from `prev` to the pool's new `cfg`: a tightened
 * adaptive ceiling keeps its bound within the new range; turning warm-up off ends every ramp.
 */
export function reconfigureCeilings(p: CeilingHolder, prev: ResolvedConfig): void {
  const next = p.cfg;
  const adapting = isAdapting(next);
  const wasAdapting = isAdapting(prev);
  if (!adapting) {
    p.effective = next.maxOutstanding;
    resetAdaptState(p);
  } else if (!wasAdapting || p.effective >= prev.maxOutstanding) {
    p.effective = next.maxOutstanding;
    if (!wasAdapting) resetAdaptState(p);
  } else {
    // Tightened: keep the tighter bound, but within the new [quarter, all] of the ceiling in force.
    p.effective = clampAdaptive(p.effective, next.maxOutstanding);
    p.adaptState = p.effective < next.maxOutstanding ? 'tightened' : 'open';
  }
  if (prev.warmupMs > 0 && next.warmupMs === 0) {
    for (const ep of p.endpoints) ep.warmStartMs = Number.NEGATIVE_INFINITY;
  }
}
