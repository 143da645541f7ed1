/**
 * The adaptive pool ceiling, one step per second per pool.
 *
 * Only fresh evidence moves the ceiling, and only fresh evidence without
 * backpressure widens it: with nothing fresh the ceiling holds (frozen), so
 * a gateway that has lost sight of its engines keeps the tighter bound it
 * last had reason for. Backpressure (an engine reporting waiting requests, or
 * a TTFT average over the target) takes four fifths, never below a quarter of
 * the configured ceiling (at least 1); a clear second adds one unit.
 */
import type { EndpointState } from './endpoints.js';

export type AdaptState = 'off' | 'open' | 'tightened' | 'frozen';
export type AdaptReason = 'none' | 'queued' | 'ttft' | 'clear' | 'stale';
export const ADAPT_STATES: readonly AdaptState[] = ['off', 'open', 'tightened', 'frozen'];
export const ADAPT_REASONS: readonly AdaptReason[] = ['queued', 'ttft', 'clear', 'stale', 'none'];

/**
 * Whether a pool's ceiling adapts: `fc_adaptive` on, a service ceiling to adapt, and a gate that
 * is not off (the one place this condition is written).
 */
export function isAdapting(c: {
  readonly adaptive: boolean;
  readonly maxOutstanding: number;
  readonly mode: string;
}): boolean {
  return c.adaptive && c.maxOutstanding > 0 && c.mode !== 'off';
}

/** The floor of the adaptive ceiling: a quarter of the configured one, at least 1. */
export function adaptiveFloor(configured: number): number {
  return Math.max(1, Math.floor(configured / 4));
}

/** `effective` brought within [floor, configured]: the only range the ceiling in force may take. */
export function clampAdaptive(effective: number, configured: number): number {
  return Math.min(configured, Math.max(adaptiveFloor(configured), effective));
}

/** One tightening step: four fifths of `effective`, never below the floor, and never above `effective`. */
export function tighten(effective: number, configured: number): number {
  return Math.min(effective, Math.max(adaptiveFloor(configured), Math.floor((effective * 4) / 5)));
}

export interface AdaptInput {
  configured: number;
  effective: number;
  ttftTargetMs: number;
  staleMs: number;
  nowMs: number;
  endpoints: readonly EndpointState[];
}

export interface AdaptStep {
  effective: number;
  state: AdaptState;
  reason: AdaptReason;
  /** -1 a step down, +1 a step up, 0 unchanged. */
  moved: -1 | 0 | 1;
}

/** Computes one adaptive step from the endpoints' telemetry. Pure. */
export function adaptStep(i: AdaptInput): AdaptStep {
  let fresh = false;
  let queued = false;
  let slow = false;
  for (const ep of i.endpoints) {
    if (!ep.healthy) continue;
    if (i.nowMs - ep.waitingAtMs <= i.staleMs) {
      fresh = true;
      if (ep.waiting > 0) queued = true;
    }
    if (i.ttftTargetMs > 0 && i.nowMs - ep.ttftAtMs <= i.staleMs) {
      fresh = true;
      if (ep.ttftEwmaMs > i.ttftTargetMs) slow = true;
    }
  }
  const eff = clampAdaptive(i.effective, i.configured);
  const stateOf = (e: number): AdaptState => (e < i.configured ? 'tightened' : 'open');
  if (!fresh) {
    return { effective: eff, state: eff < i.configured ? 'frozen' : 'open', reason: 'stale', moved: 0 };
  }
  if (queued || slow) {
    const next = tighten(eff, i.configured);
    return {
      effective: next,
      state: stateOf(next),
      reason: queued ? 'queued' : 'ttft',
      moved: next < eff ? -1 : 0,
    };
  }
  const next = eff < i.configured ? eff + 1 : eff;
  return { effective: next, state: stateOf(next), reason: 'clear', moved: next > eff ? 1 : 0 };
}

/**
 * Folds one TTFT sample (ms) into an endpoint's average: (7·old + sample)/8,
 * restarting from the sample when the previous one is older than `staleMs`.
 */
export function recordTtft(ep: EndpointState, sampleMs: number, nowMs: number, staleMs: number): void {
  if (Number.isNaN(ep.ttftEwmaMs) || nowMs - ep.ttftAtMs > staleMs) ep.ttftEwmaMs = sampleMs;
  else ep.ttftEwmaMs = (7 * ep.ttftEwmaMs + sampleMs) / 8;
  ep.ttftAtMs = nowMs;
}
