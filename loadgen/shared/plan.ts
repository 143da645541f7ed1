/**
 * The k6 plan: everything the k6 cliff script needs from a scenario, computed once in Node by
 * `sluice k6-plan` (k6 cannot read the scenario YAML nor replay a trace file) and loaded by the
 * script with `open()`. It holds the ramping-arrival-rate stages derived from the schedule, the
 * schedule's requests in order (iteration i of the test sends request i), the tenants' API keys,
 * the retry policy, SLO thresholds and VU sizing. Pure: it could be built inside k6 too.
 */
import type { RetryConfig } from '../../sim/clients/retry.js';
import { createSchedule, type LoadSetup } from '../../sim/clients/schedule.js';
import { type ArrivalStages, stagesFromCounts, windowCounts } from './stages.js';

/** One request of the plan (a logical request; its retries are the script's business). */
export interface PlanRequest {
  /** Tenant id, null for keyless traffic. */
  tenant: string | null;
  promptTokens: number;
  outputTokens: number;
  stream: boolean;
  inference: boolean;
  protocol: 'http1' | 'h2';
  /** The client gives up this long after the first send, ms; null for never. */
  deadlineMs: number | null;
  /** TTFT objective, ms; null for none. */
  ttftSloMs: number | null;
}

/** Configured ceilings, as in the run summary. */
export interface PlanCeilings {
  max_outstanding: number;
  queue_depth: number;
  queue_wait_ms: number;
}

/** The k6 plan file. */
export interface K6Plan {
  version: 1;
  scenario: string;
  seed: number;
  duration_scale: number;
  /** Scaled run length and warm-up, s. */
  duration_s: number;
  warmup_s: number;
  dialect: 'loxilb' | 'smg';
  ceilings: PlanCeilings;
  /** Counting window of the stages, ms (also their timeUnit). */
  window_ms: number;
  arrival: ArrivalStages;
  apiKeys: Record<string, string>;
  retry: RetryConfig;
  /** Tenant labels in config order (keyless traffic as `keyless`). */
  tenants: string[];
  vus: { preAllocated: number; max: number };
  thresholds: { goodputMin: number; droppedMax: number };
  /** `model` for the payloads; null to omit. */
  model: string | null;
  requests: PlanRequest[];
}

/** Inputs of {@link buildK6Plan} besides the setup. */
export interface PlanInfo {
  scenario: string;
  seed: number;
  durationScale: number;
  /** Scaled run length and warm-up, ms. */
  endMs: number;
  warmupMs: number;
  dialect: 'loxilb' | 'smg';
  ceilings: PlanCeilings;
  /** Stage window, ms. Default 1000. */
  windowMs?: number;
  /** Goodput threshold (share of offered requests). Default 0.8. */
  goodputMin?: number;
  /** Dropped iterations allowed, as a share of the planned requests. Default 0.01. */
  droppedShare?: number;
  model?: string;
  /** Longest a VU is assumed busy with one request when no deadline bounds it, s. Default 60. */
  holdS?: number;
  /** Trace records, when the scenario replays a trace. */
  traceRecords?: Parameters<typeof createSchedule>[1]['traceRecords'];
}

/** Builds the plan (see the module doc). */
export function buildK6Plan(setup: LoadSetup, info: PlanInfo): K6Plan {
  const windowMs = info.windowMs ?? 1000;
  const schedule = createSchedule(setup, {
    seed: info.seed,
    endMs: info.endMs,
    ...(info.traceRecords ? { traceRecords: info.traceRecords } : {}),
  });
  const requests: PlanRequest[] = [];
  const times: number[] = [];
  const tenants = new Set<string>();
  let longestDeadline = 0;
  for (let d = schedule.next(); d !== undefined; d = schedule.next()) {
    times.push(d.sentAtMs);
    const deadlineMs = d.deadlineMs === undefined ? null : d.deadlineMs - d.firstSentAtMs;
    longestDeadline = Math.max(longestDeadline, deadlineMs ?? (info.holdS ?? 60) * 1000);
    tenants.add(d.tenant ?? 'keyless');
    requests.push({
      tenant: d.tenant ?? null,
      promptTokens: d.promptTokens,
      outputTokens: d.outputTokens,
      stream: d.stream,
      inference: d.inference,
      protocol: d.protocol,
      deadlineMs,
      ttftSloMs: d.ttftSloMs ?? null,
    });
  }
  const arrival = stagesFromCounts(windowCounts(times, info.endMs, windowMs), windowMs);
  const peakPerSec = arrival.peak / (windowMs / 1000);
  const holdS = Math.min(longestDeadline / 1000, info.holdS ?? 60);
  const max = Math.max(10, Math.ceil(peakPerSec * holdS) + 10);
  return {
    version: 1,
    scenario: info.scenario,
    seed: info.seed,
    duration_scale: info.durationScale,
    duration_s: info.endMs / 1000,
    warmup_s: info.warmupMs / 1000,
    dialect: info.dialect,
    ceilings: info.ceilings,
    window_ms: windowMs,
    arrival,
    apiKeys: { ...setup.apiKeys },
    retry: setup.retry,
    tenants: [...tenants].sort(),
    vus: { preAllocated: Math.min(max, Math.ceil(peakPerSec * 5) + 5), max },
    thresholds: {
      goodputMin: info.goodputMin ?? 0.8,
      droppedMax: Math.ceil(requests.length * (info.droppedShare ?? 0.01)),
    },
    model: info.model ?? null,
    requests,
  };
}

/** Refusal keys (`status error`) the script counts, so the summary can list them. */
export const REFUSAL_KEYS = [
  '429 admission_capacity',
  '429 admission_tenant_share',
  '429 admission_queue_full',
  '503 admission_no_capacity',
  '503 gateway_draining',
  '503 admission_drained',
  '503 admission_queue_timeout',
  '504 admission_queue_timeout',
] as const;

/** Outcomes the script counts. */
export const OUTCOME_KEYS = ['completed', 'shed', 'timed_out', 'cancelled', 'drained', 'failed'] as const;

/** Names of the script's custom metrics. */
export const METRIC = {
  goodput: 'sluice_goodput',
  offered: 'sluice_offered',
  attempts: 'sluice_attempts',
  completed: 'sluice_completed',
  outcomes: 'sluice_outcomes',
  refusals: 'sluice_refusals',
  ttft: 'sluice_ttft_ms',
  e2e: 'sluice_e2e_ms',
  queueWait: 'sluice_queue_wait_ms',
  inflight: 'sluice_gate_inflight',
  queued: 'sluice_gate_queued',
} as const;

/** Environment overrides the script reads (`k6 run -e NAME=value`). */
export interface PlanEnv {
  GOODPUT_MIN?: string;
  DROPPED_MAX?: string;
  PRE_VUS?: string;
  MAX_VUS?: string;
  GRACEFUL_STOP?: string;
}

/** A k6 threshold: an expression or one with abort settings. */
export type ThresholdSpec = string | { threshold: string; abortOnFail?: boolean; delayAbortEval?: string };

/** The k6 `options` of the plan: one ramping-arrival-rate scenario and the thresholds. */
export function k6Options(plan: K6Plan, env: PlanEnv = {}) {
  const num = (v: string | undefined, d: number): number => (v !== undefined && v !== '' ? Number(v) : d);
  const goodputMin = num(env.GOODPUT_MIN, plan.thresholds.goodputMin);
  const dropped = num(env.DROPPED_MAX, plan.thresholds.droppedMax);
  const thresholds: Record<string, ThresholdSpec[]> = {
    [METRIC.goodput]: [`rate>=${goodputMin}`],
    dropped_iterations: [`count<=${dropped}`],
  };
  // Submetrics with always-true thresholds, so the end-of-test data breaks the counts down.
  for (const t of plan.tenants) {
    thresholds[`${METRIC.goodput}{tenant:${t}}`] = ['rate>=0'];
    thresholds[`${METRIC.completed}{tenant:${t}}`] = ['count>=0'];
  }
  for (const o of OUTCOME_KEYS) thresholds[`${METRIC.outcomes}{outcome:${o}}`] = ['count>=0'];
  for (const r of REFUSAL_KEYS) thresholds[`${METRIC.refusals}{refusal:${r}}`] = ['count>=0'];
  return {
    scenarios: {
      cliff: {
        executor: 'ramping-arrival-rate' as const,
        exec: 'cliff',
        startRate: plan.arrival.startRate,
        timeUnit: plan.arrival.timeUnit,
        stages: plan.arrival.stages,
        preAllocatedVUs: num(env.PRE_VUS, plan.vus.preAllocated),
        maxVUs: num(env.MAX_VUS, plan.vus.max),
        gracefulStop: env.GRACEFUL_STOP ?? '30s',
      },
    },
    thresholds,
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(95)', 'p(99)', 'count'],
  };
}
