/**
 * `fc_effective`: what is in force on a pool, live counts included, with the
 * source of every configured value. Present on GET for AI-gateway services,
 * ignored on input.
 */
import type { AdaptReason, AdaptState } from './adaptive.js';
import type { DeclaredFc, ValueSource } from './config.js';
import { type FcFieldName, MODE_NUMBER, PARKED_REQUEST_MIB } from './fields.js';
import type { Pool } from './pool.js';

export interface FcEffective {
  mode: 'off' | 'observe' | 'enforce';
  max_outstanding: number;
  ep_max_inflight: number;
  prefill_max_inflight: number;
  decode_max_inflight: number;
  queue_depth: number;
  queue_wait_ms: number;
  inflight: number;
  queued: number;
  /** Memory the full queue may park: depth × 1 MiB. */
  queue_memory_bound_mib: number;
  telemetry_stale_ms: number;
  adaptive: 'on' | 'off';
  ttft_target_ms: number;
  effective_max_outstanding: number;
  adapt_state: AdaptState;
  adapt_reason: AdaptReason;
  warmup_ms: number;
  warming_endpoints: number;
  tenant_max_share_pct: number;
  tenants_active: number;
  expose_headers: 'on' | 'off';
  source: Record<string, ValueSource>;
}

/** fc_effective keys by rule field. */
export const EFFECTIVE_KEY: Readonly<Record<FcFieldName, keyof FcEffective>> = {
  fc_mode: 'mode',
  fc_max_outstanding: 'max_outstanding',
  fc_ep_max_inflight: 'ep_max_inflight',
  fc_prefill_max_inflight: 'prefill_max_inflight',
  fc_decode_max_inflight: 'decode_max_inflight',
  fc_max_queue_depth: 'queue_depth',
  fc_max_queue_wait_ms: 'queue_wait_ms',
  fc_adaptive: 'adaptive',
  fc_ttft_target_ms: 'ttft_target_ms',
  fc_telemetry_stale_ms: 'telemetry_stale_ms',
  fc_warmup_ms: 'warmup_ms',
  fc_tenant_max_share_pct: 'tenant_max_share_pct',
  fc_expose_headers: 'expose_headers',
};

/** Builds fc_effective from a pool's state. */
export function fcEffective(pool: Pool): FcEffective {
  const c = pool.cfg;
  const source: Record<string, ValueSource> = {};
  for (const [field, key] of Object.entries(EFFECTIVE_KEY)) source[key] = c.source[field as FcFieldName];
  return {
    mode: c.mode,
    max_outstanding: c.maxOutstanding,
    ep_max_inflight: c.epMaxInflight,
    prefill_max_inflight: c.prefillMaxInflight,
    decode_max_inflight: c.decodeMaxInflight,
    queue_depth: c.queueDepth,
    queue_wait_ms: c.queueWaitMs,
    inflight: pool.inflight,
    queued: pool.queue.length,
    queue_memory_bound_mib: c.queueDepth * PARKED_REQUEST_MIB,
    telemetry_stale_ms: c.telemetryStaleMs,
    adaptive: c.adaptive ? 'on' : 'off',
    ttft_target_ms: c.ttftTargetMs,
    effective_max_outstanding: pool.effective,
    adapt_state: pool.adaptState,
    adapt_reason: pool.adaptReason,
    warmup_ms: c.warmupMs,
    warming_endpoints: pool.warmingEndpoints(),
    tenant_max_share_pct: c.tenantMaxSharePct,
    tenants_active: pool.shareActive ? pool.tenants.active : 0,
    expose_headers: c.exposeHeaders ? 'on' : 'off',
    source,
  };
}

/** The fc fields as a rule declared them, in the shape GET returns. */
export function declaredFields(d: Readonly<DeclaredFc>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(d)) {
    if (v === undefined) continue;
    out[k] = typeof v === 'boolean' ? (v ? 'on' : 'off') : v;
  }
  return out;
}

/** The mode gauge value. */
export function modeNumber(pool: Pool): number {
  return MODE_NUMBER[pool.cfg.mode];
}
