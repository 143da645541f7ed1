/**
 * The simulated engines behind a scenario's endpoints: one engine per
 * endpoint, built from its group's profile and overrides, driven on the
 * virtual clock, with the knobs the timeline turns (slowdown, process down/up).
 */

import { VllmEngine } from '../engine/engine.js';
import { ExponentialServerEngine } from '../engine/exponential-engine.js';
import { lognormalStepJitter } from '../engine/jitter.js';
import { DEPLOYMENT_PROFILES, type DeploymentProfile, type EngineLimits } from '../engine/profiles.js';
import { RecordedEngine, type RecordedEngineRequest } from '../engine/recorded-engine.js';
import { SimEngineHost } from '../engine/sim-host.js';
import { fittedStepTime, rooflineStepTime, type StepTimeModel } from '../engine/step-time.js';
import type { StepOutcome, TrackedEngine } from '../engine/types.js';
import { rngStream } from '../kernel/rng.js';
import type { Simulator } from '../kernel/simulator.js';
import type { EngineGroup, PoolEndpoint } from '../scenario/resolve.js';

/** A request as the engines see it in a run. */
export interface SimEngineRequest extends RecordedEngineRequest {
  /** The run's request context, returned with step outcomes. */
  readonly ctx: unknown;
}

/** One endpoint's engine and its state in the run. */
export interface EngineNode {
  readonly endpoint: PoolEndpoint;
  readonly host: SimEngineHost<SimEngineRequest>;
  readonly engine: TrackedEngine<SimEngineRequest>;
  /**
   * Frontend delay before a request reaches the engine, ms: read once per request, each read
   * a fresh seeded draw when the group's api_jitter_sigma is above 0 (else the constant).
   */
  readonly apiOverheadMs: number;
  /** Step-time multiplier set by engine_slowdown events (1 = normal). */
  slowdown: number;
  /** False while the engine process is down (endpoint_down, flap, capacity_loss). */
  up: boolean;
  /** True while its scrapes fail (scrape_outage, telemetry outages). */
  scrapeOutage: number;
}

/**
 * The built-in profile a fitted or exponential group takes its limits from (only its limits:
 * their frontend delay and jitter are 0 unless the group sets them).
 */
const BASE_PROFILE: DeploymentProfile = DEPLOYMENT_PROFILES['llama-3.1-8b-h100'];

function limitsOf(g: EngineGroup, base: DeploymentProfile): EngineLimits {
  const l = base.limits;
  const blocks =
    g.num_gpu_blocks ??
    (g.gpu_memory_utilization !== undefined
      ? Math.max(1, Math.floor((l.numGpuBlocks * g.gpu_memory_utilization) / l.gpuMemoryUtilization))
      : l.numGpuBlocks);
  return {
    maxNumSeqs: g.max_num_seqs ?? l.maxNumSeqs,
    maxNumBatchedTokens: Math.max(g.max_num_batched_tokens ?? l.maxNumBatchedTokens, g.max_num_seqs ?? 1),
    blockSize: g.block_size ?? l.blockSize,
    numGpuBlocks: blocks,
    maxModelLen: g.max_model_len ?? l.maxModelLen,
    longPrefillTokenThreshold: g.long_prefill_token_threshold ?? l.longPrefillTokenThreshold,
    gpuMemoryUtilization: g.gpu_memory_utilization ?? l.gpuMemoryUtilization,
  };
}

/**
 * Builds one engine per endpoint.
 * @param onStep receives every step outcome with the node it came from
 * @param runAhead let vLLM engines plan uneventful steps ahead (same outputs, fewer events dispatched)
 */
export function buildEngines(
  sim: Simulator,
  seed: number,
  groups: readonly EngineGroup[],
  endpoints: readonly PoolEndpoint[],
  onStep: (node: EngineNode, outcome: StepOutcome<SimEngineRequest>) => void,
  runAhead = true,
): EngineNode[] {
  return endpoints.map((ep) => {
    const g = groups.find((x) => x.name === ep.group);
    if (g === undefined) throw new Error(`internal: no engine group ${ep.group}`);
    const base: DeploymentProfile =
      g.calibrated ??
      (g.profile in DEPLOYMENT_PROFILES
        ? DEPLOYMENT_PROFILES[g.profile as keyof typeof DEPLOYMENT_PROFILES]
        : BASE_PROFILE);
    const limits = limitsOf(g, base);
    const role = ep.role === 'normal' ? 'unified' : ep.role;
    const node = { slowdown: 1, up: true, scrapeOutage: 0 } as EngineNode;
    let engine: TrackedEngine<SimEngineRequest>;
    if (g.profile === 'recorded') {
      engine = new RecordedEngine<SimEngineRequest>({ modelName: 'recorded', engineIndex: String(ep.index) });
    } else if (g.profile === 'exponential') {
      engine = new ExponentialServerEngine<SimEngineRequest>({
        modelName: 'exponential',
        engineIndex: String(ep.index),
        servers: limits.maxNumSeqs,
        meanServiceMs: g.mean_service_ms ?? 1000,
        rng: rngStream(seed, `engine.${ep.index}.service`),
      });
    } else {
      const model: StepTimeModel =
        g.fitted !== undefined ? fittedStepTime(g.fitted) : rooflineStepTime(base.roofline);
      const sigma = g.step_jitter_sigma ?? (g.profile === 'fitted' ? 0 : base.stepJitterSigma);
      engine = new VllmEngine<SimEngineRequest>({
        modelName: base.modelName,
        engineIndex: String(ep.index),
        role,
        limits,
        // The run counts tokens through `progress`, not per-token lists, handles each step's
        // outcome before the next step, and reads only the engines' gauges (no histograms).
        reportTokens: false,
        reuseOutcome: true,
        histograms: false,
        // Every attempt has an id of its own (a counter), and an id is looked up only when a
        // client leaves while its request is on the engine.
        indexIds: false,
        ...(runAhead ? { runAhead: true } : {}),
        stepTime: (b) => model(b) * node.slowdown,
        ...(sigma > 0
          ? { jitter: lognormalStepJitter(sigma, rngStream(seed, `engine.${ep.index}.jitter`)) }
          : {}),
        ...(g.cold_start
          ? { coldStart: { factor: g.cold_start.factor, windowMs: g.cold_start.window_s * 1000 } }
          : {}),
      });
    }
    const host = new SimEngineHost<SimEngineRequest>(sim, engine, (outcome) => onStep(node, outcome));
    Object.assign(node, { endpoint: ep, host, engine });
    // Only the deployment profiles carry a frontend; the abstract engines have none unless set.
    const ownProfile = g.profile in DEPLOYMENT_PROFILES;
    const api = g.api_overhead_ms ?? (ownProfile ? base.apiOverheadMs : 0);
    const apiSigma = g.api_jitter_sigma ?? (ownProfile ? base.apiJitterSigma : 0);
    if (api > 0 && apiSigma > 0) {
      const rng = rngStream(seed, `engine.${ep.index}.api`);
      // Rounded to the µs: the simulator's clock keeps that grid.
      Object.defineProperty(node, 'apiOverheadMs', {
        get: () => Math.round(api * rng.lognormal(0, apiSigma) * 1000) / 1000,
      });
    } else {
      Object.assign(node, { apiOverheadMs: api });
    }
    return node;
  });
}
