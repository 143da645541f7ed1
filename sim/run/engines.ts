/**
 * The simulated engines behind a scenario's endpoints: one engine per
 * endpoint, built from its group's profile and overrides, driven on the
 * virtual clock, with the knobs the timeline turns (slowdown, process down/up).
 */

import { buildEngine, type LimitOverrides } from '../engine/catalogue.js';
import { frontendDelayMs } from '../engine/frontend.js';
import { DEPLOYMENT_PROFILES, type DeploymentProfileId } from '../engine/profiles.js';
import type { RecordedEngineRequest } from '../engine/recorded-engine.js';
import { SimEngineHost } from '../engine/sim-host.js';
import type { StepOutcome, TrackedEngine } from '../engine/types.js';
import { type Rng, rngStream } from '../kernel/rng.js';
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

/** A group's limit settings, as overrides of its profile's. */
function limitOverrides(g: EngineGroup): LimitOverrides {
  return {
    ...(g.max_num_seqs === undefined ? {} : { maxNumSeqs: g.max_num_seqs }),
    ...(g.max_num_batched_tokens === undefined ? {} : { maxNumBatchedTokens: g.max_num_batched_tokens }),
    ...(g.block_size === undefined ? {} : { blockSize: g.block_size }),
    ...(g.num_gpu_blocks === undefined ? {} : { numGpuBlocks: g.num_gpu_blocks }),
    ...(g.max_model_len === undefined ? {} : { maxModelLen: g.max_model_len }),
    ...(g.long_prefill_token_threshold === undefined
      ? {}
      : { longPrefillTokenThreshold: g.long_prefill_token_threshold }),
    ...(g.gpu_memory_utilization === undefined ? {} : { gpuMemoryUtilization: g.gpu_memory_utilization }),
  };
}

/**
 * An {@link EngineNode}. A class, so that every node has the same hidden class: the frontend
 * delay's draw is a getter on the prototype, where a getter defined on each node (one closure
 * apiece) gave every node a map of its own, and each read of a node anywhere in the run
 * (about one per engine step) went through a megamorphic inline cache.
 */
class SimEngineNode implements EngineNode {
  // Set by buildEngines right after the engine and its host are built (both need the node).
  host = undefined as unknown as SimEngineHost<SimEngineRequest>;
  engine = undefined as unknown as TrackedEngine<SimEngineRequest>;
  slowdown = 1;
  up = true;
  scrapeOutage = 0;
  /** Median frontend delay of an idle frontend, ms. */
  #apiMs = 0;
  /** σ of the delay's lognormal jitter; 0 = the constant {@link SimEngineNode.#apiMs}. */
  #apiSigma = 0;
  #apiRng: Rng | null = null;
  /** Frontend work per streamed token, ms (`frontend.ts`); 0 = no load term. */
  #perTokenMs = 0;
  /** The engine's output tokens per ms now (read after the host's sync). */
  #streamRate: () => number = () => 0;

  constructor(readonly endpoint: PoolEndpoint) {}

  /**
   * Sets the frontend delay: `ms` (≥ 0), times a seeded lognormal draw with σ `sigma` at each
   * read when `sigma` > 0 (stream `engine.<index>.api` of `seed`), lengthened by the engine's
   * output stream when `perTokenMs` > 0 (`frontend.ts`).
   */
  setApiOverhead(
    ms: number,
    sigma: number,
    seed: number,
    perTokenMs: number,
    streamRate: () => number,
  ): void {
    this.#apiMs = ms;
    this.#apiSigma = sigma;
    this.#apiRng = sigma > 0 ? rngStream(seed, `engine.${this.endpoint.index}.api`) : null;
    this.#perTokenMs = ms > 0 ? perTokenMs : 0;
    this.#streamRate = streamRate;
  }

  get apiOverheadMs(): number {
    const rng = this.#apiRng;
    const base = rng === null ? this.#apiMs : this.#apiMs * rng.lognormal(0, this.#apiSigma);
    if (this.#perTokenMs > 0) {
      // The engine's state as of now (a run-ahead plan caught up): the same in both step modes.
      this.host.sync();
      return Math.round(frontendDelayMs(base, this.#perTokenMs, this.#streamRate()) * 1000) / 1000;
    }
    // Rounded to the µs: the simulator's clock keeps that grid.
    return rng === null ? base : Math.round(base * 1000) / 1000;
  }
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
    const role = ep.role === 'normal' ? 'unified' : ep.role;
    const node = new SimEngineNode(ep);
    // Deployments jitter their steps as their profile says; the abstract engines do not unless set.
    const profileSigma = g.calibrated ?? DEPLOYMENT_PROFILES[g.profile as DeploymentProfileId];
    const sigma = g.step_jitter_sigma ?? (g.profile === 'fitted' ? 0 : (profileSigma?.stepJitterSigma ?? 0));
    const built = buildEngine<SimEngineRequest>({
      profile: g.profile,
      index: ep.index,
      seed,
      role,
      ...(g.calibrated === undefined ? {} : { calibrated: g.calibrated }),
      limits: limitOverrides(g),
      ...(g.fitted === undefined ? {} : { fitted: g.fitted }),
      stepJitterSigma: sigma,
      ...(g.cold_start
        ? { coldStart: { factor: g.cold_start.factor, windowMs: g.cold_start.window_s * 1000 } }
        : {}),
      ...(g.mean_service_ms === undefined ? {} : { meanServiceMs: g.mean_service_ms }),
      slowdown: () => node.slowdown,
      // The run counts tokens through `progress`, not per-token lists, handles each step's
      // outcome before the next step, and reads only the engines' gauges (no histograms).
      // Every attempt has an id of its own (a counter), and an id is looked up only when a
      // client leaves while its request is on the engine.
      vllm: {
        reportTokens: false,
        reuseOutcome: true,
        histograms: false,
        indexIds: false,
        ...(runAhead ? { runAhead: true } : {}),
      },
    });
    const engine = built.tracked;
    if (engine === undefined) throw new Error(`internal: profile ${g.profile} is not simulated`);
    const host = new SimEngineHost<SimEngineRequest>(sim, engine, (outcome) => onStep(node, outcome));
    node.host = host;
    node.engine = engine;
    const api = g.api_overhead_ms ?? built.apiOverheadMs;
    const apiSigma = g.api_jitter_sigma ?? built.apiJitterSigma;
    node.setApiOverhead(
      api,
      api > 0 && apiSigma > 0 ? apiSigma : 0,
      seed,
      g.frontend_per_token_ms ?? built.frontendPerTokenMs,
      built.streamRatePerMs,
    );
    return node;
  });
}
