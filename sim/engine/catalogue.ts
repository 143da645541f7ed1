/**
 * The engine catalogue: every engine profile Sluice knows, whether the simulator runs it (a
 * scenario can name it) and whether the emulator serves it on the real clock, and the one
 * factory that builds its engine. The simulator (`sim/run/engines.ts`), the emulator
 * (`loadgen/emulator/`) and a real run of the cliff all build their engines here, so a profile
 * name means the same engine in each.
 *
 * The factory takes what differs between a simulated and an emulated engine as options (step
 * jitter, the vLLM engine's speed flags, the group's overrides); the profile's defaults (limits,
 * step model, frontend delay, model name) are decided here once.
 */

import { rngStream } from '../kernel/rng.js';
import { VllmEngine, type VllmEngineConfig } from './engine.js';
import { ExponentialServerEngine } from './exponential-engine.js';
import { FixedEngine } from './fixed-engine.js';
import { lognormalStepJitter } from './jitter.js';
import {
  DEPLOYMENT_PROFILES,
  type DeploymentProfile,
  type EngineLimits,
  type RooflineParams,
} from './profiles.js';
import { RecordedEngine, type RecordedEngineRequest } from './recorded-engine.js';
import {
  type ColdStart,
  type FittedCoefficients,
  fittedStepTime,
  rooflineStepTime,
  type StepTimeModel,
} from './step-time.js';
import type { Engine, EngineRole, TrackedEngine } from './types.js';

/** What builds a profile's engine. */
export type EngineKind = 'deployment' | 'exponential' | 'recorded' | 'fitted' | 'fixed';

/** One profile of the catalogue. */
export interface CatalogueEntry {
  readonly name: string;
  readonly kind: EngineKind;
  /** A scenario can name it: the simulator runs it. */
  readonly simulated: boolean;
  /** The emulator serves it on the real clock (`sluice engine`, real runs). */
  readonly emulated: boolean;
}

/** Name of the constant-timing profile (emulator only). */
export const FIXED_PROFILE = 'fixed';

/** The analytic and recorded profiles, in the order scenarios list them. */
const ANALYTIC: readonly CatalogueEntry[] = [
  { name: 'exponential', kind: 'exponential', simulated: true, emulated: true },
  { name: 'recorded', kind: 'recorded', simulated: true, emulated: false },
  { name: 'fitted', kind: 'fitted', simulated: true, emulated: false },
];

/** Every profile: `fixed`, the analytic ones, then the built-in deployments. */
export const ENGINE_CATALOGUE: readonly CatalogueEntry[] = [
  { name: FIXED_PROFILE, kind: 'fixed', simulated: false, emulated: true },
  ...ANALYTIC,
  ...Object.keys(DEPLOYMENT_PROFILES).map(
    (name): CatalogueEntry => ({ name, kind: 'deployment', simulated: true, emulated: true }),
  ),
];

/** Profiles a scenario can name: the analytic ones, then the deployments. */
export const SIMULATED_PROFILES: readonly [string, ...string[]] = [
  ...ANALYTIC.map((e) => e.name),
  ...Object.keys(DEPLOYMENT_PROFILES),
] as [string, ...string[]];

/** Profiles the emulator serves: `fixed`, the deployments, then `exponential`. */
export const EMULATED_PROFILES: readonly string[] = [
  FIXED_PROFILE,
  ...Object.keys(DEPLOYMENT_PROFILES),
  ...ANALYTIC.filter((e) => e.emulated).map((e) => e.name),
];

/** The catalogue entry of `name`, or undefined. */
export function catalogueEntry(name: string): CatalogueEntry | undefined {
  return ENGINE_CATALOGUE.find((e) => e.name === name);
}

/**
 * The deployment an abstract vLLM-model profile (`fitted`) or the exponential engine takes its
 * limits from (only its limits: their frontend delay and jitter are 0 unless set).
 */
const BASE_PROFILE: DeploymentProfile = DEPLOYMENT_PROFILES['llama-3.1-8b-h100'];

/** The `fixed` profile's concurrency cap when not given. */
const FIXED_DEFAULT_CONCURRENCY = 8;
/** The `fixed` profile's `max_model_len`. */
const FIXED_MAX_MODEL_LEN = 131_072;
/** The exponential engine's `max_model_len` (it has no context limit of its own). */
const EXPONENTIAL_MAX_MODEL_LEN = 1_000_000;

/** Settings of the `fixed` profile, engine ms. */
export interface FixedProfileOptions {
  /** Admission to first token. @default 50 */
  readonly ttftMs?: number;
  /** Between tokens. @default 10 */
  readonly itlMs?: number;
}

/** Limits overriding the profile's (a scenario group's settings, the emulator's flags). */
export interface LimitOverrides extends Partial<EngineLimits> {}

/** What building an engine needs; everything but `profile`, `index` and `seed` optional. */
export interface EngineBuildOptions {
  readonly profile: string;
  /** Pool index: the `engine` label and the random streams `engine.<index>.*` of `seed`. */
  readonly index: number;
  readonly seed: number | string;
  /** Served model name. @default the profile's */
  readonly modelName?: string;
  /** @default 'unified' */
  readonly role?: EngineRole;
  /** The deployment with calibrated terms (`sluice calibrate`), instead of the built-in one. */
  readonly calibrated?: DeploymentProfile;
  readonly limits?: LimitOverrides;
  /** vLLM model: fitted step-time coefficients instead of the roofline. */
  readonly fitted?: FittedCoefficients;
  /** vLLM model: lognormal step jitter sigma (stream `engine.<index>.jitter`). @default 0 */
  readonly stepJitterSigma?: number;
  readonly coldStart?: ColdStart;
  /** Exponential: mean service time, engine ms. @default 1000 */
  readonly meanServiceMs?: number;
  readonly fixed?: FixedProfileOptions;
  /** Current slowdown factor, read whenever a step or token is timed. @default () => 1 */
  readonly slowdown?: () => number;
  /** vLLM model: the host's speed flags (same outputs, less work). */
  readonly vllm?: Pick<
    VllmEngineConfig,
    'reportTokens' | 'reuseOutcome' | 'histograms' | 'indexIds' | 'runAhead'
  >;
}

/** A built engine and the facts a host needs about it. */
export interface BuiltEngine<R extends RecordedEngineRequest> {
  readonly engine: Engine<R>;
  /** The same engine when it reports per-request progress (every simulated profile). */
  readonly tracked: TrackedEngine<R> | undefined;
  readonly modelName: string;
  /** Longest prompt + output accepted, tokens. */
  readonly maxModelLen: number;
  /** `max_num_seqs` in force (the exponential engine's servers, `fixed`'s concurrency cap). */
  readonly maxNumSeqs: number;
  /** The profile's frontend delay before a request reaches the engine, engine ms, and its jitter. */
  readonly apiOverheadMs: number;
  readonly apiJitterSigma: number;
  /** Frontend work per streamed output token, ms (`frontend.ts`); 0 = a constant frontend delay. */
  readonly frontendPerTokenMs: number;
  /** Output tokens the engine streams per ms now (0 for engines without a frontend load). */
  readonly streamRatePerMs: () => number;
}

const NO_FRONTEND = {
  apiOverheadMs: 0,
  apiJitterSigma: 0,
  frontendPerTokenMs: 0,
  streamRatePerMs: () => 0,
} as const;

/** The profile's limits with the overrides applied (blocks scale with gpu_memory_utilization). */
function limitsOf(l: EngineLimits, o: LimitOverrides): EngineLimits {
  const blocks =
    o.numGpuBlocks ??
    (o.gpuMemoryUtilization !== undefined
      ? Math.max(1, Math.floor((l.numGpuBlocks * o.gpuMemoryUtilization) / l.gpuMemoryUtilization))
      : l.numGpuBlocks);
  return {
    maxNumSeqs: o.maxNumSeqs ?? l.maxNumSeqs,
    maxNumBatchedTokens: Math.max(o.maxNumBatchedTokens ?? l.maxNumBatchedTokens, o.maxNumSeqs ?? 1),
    blockSize: o.blockSize ?? l.blockSize,
    numGpuBlocks: blocks,
    maxModelLen: o.maxModelLen ?? l.maxModelLen,
    longPrefillTokenThreshold: o.longPrefillTokenThreshold ?? l.longPrefillTokenThreshold,
    gpuMemoryUtilization: o.gpuMemoryUtilization ?? l.gpuMemoryUtilization,
  };
}

/**
 * One roofline step-time model per parameter object, shared by every engine built from it: the
 * model is a pure function of its parameters, and a pool of 112 engines reading one closure
 * keeps its constants in cache, where 112 copies each came from memory at every step.
 */
const ROOFLINE_MODELS = new WeakMap<RooflineParams, StepTimeModel>();

function sharedRoofline(p: RooflineParams): StepTimeModel {
  let model = ROOFLINE_MODELS.get(p);
  if (model === undefined) {
    model = rooflineStepTime(p);
    ROOFLINE_MODELS.set(p, model);
  }
  return model;
}

/**
 * Builds the engine of a catalogue profile.
 * @throws RangeError for a name not in the catalogue
 */
export function buildEngine<R extends RecordedEngineRequest>(o: EngineBuildOptions): BuiltEngine<R> {
  const entry = catalogueEntry(o.profile);
  if (entry === undefined) {
    throw new RangeError(
      `profile: ${JSON.stringify(o.profile)} is not one of ${ENGINE_CATALOGUE.map((e) => e.name).join(', ')}`,
    );
  }
  const engineIndex = String(o.index);
  const slowdown = o.slowdown ?? (() => 1);
  if (entry.kind === 'fixed') {
    const modelName = o.modelName ?? 'sluice/fixed';
    const maxNumSeqs = o.limits?.maxNumSeqs ?? FIXED_DEFAULT_CONCURRENCY;
    const engine = new FixedEngine<R>({
      modelName,
      ttftMs: o.fixed?.ttftMs ?? 50,
      itlMs: o.fixed?.itlMs ?? 10,
      maxConcurrency: maxNumSeqs,
      maxModelLen: FIXED_MAX_MODEL_LEN,
      slowdown,
    });
    const facts = { modelName, maxModelLen: FIXED_MAX_MODEL_LEN, maxNumSeqs };
    return { engine, tracked: undefined, ...facts, ...NO_FRONTEND };
  }
  const own = entry.kind === 'deployment';
  const base: DeploymentProfile =
    o.calibrated ?? (own ? DEPLOYMENT_PROFILES[o.profile as keyof typeof DEPLOYMENT_PROFILES] : BASE_PROFILE);
  const limits = limitsOf(base.limits, o.limits ?? {});
  // Only the deployment profiles carry a frontend; the abstract engines have none unless set.
  const api = own
    ? { ...NO_FRONTEND, apiOverheadMs: base.apiOverheadMs, apiJitterSigma: base.apiJitterSigma }
    : NO_FRONTEND;
  if (entry.kind === 'recorded') {
    const engine = new RecordedEngine<R>({ modelName: o.modelName ?? 'recorded', engineIndex });
    const facts = { modelName: o.modelName ?? 'recorded', maxModelLen: limits.maxModelLen };
    return { engine, tracked: engine, ...facts, maxNumSeqs: limits.maxNumSeqs, ...api };
  }
  if (entry.kind === 'exponential') {
    const modelName = o.modelName ?? 'exponential';
    const engine = new ExponentialServerEngine<R>({
      modelName,
      engineIndex,
      servers: limits.maxNumSeqs,
      meanServiceMs: o.meanServiceMs ?? 1000,
      rng: rngStream(o.seed, `engine.${o.index}.service`),
    });
    const facts = { modelName, maxModelLen: EXPONENTIAL_MAX_MODEL_LEN, maxNumSeqs: limits.maxNumSeqs };
    return { engine, tracked: engine, ...facts, ...api };
  }
  const model = o.fitted !== undefined ? fittedStepTime(o.fitted) : sharedRoofline(base.roofline);
  const sigma = o.stepJitterSigma ?? 0;
  const modelName = o.modelName ?? base.modelName;
  const engine = new VllmEngine<R>({
    modelName,
    engineIndex,
    ...(o.role === undefined ? {} : { role: o.role }),
    limits,
    ...o.vllm,
    stepTime: (b) => model(b) * slowdown(),
    ...(sigma > 0
      ? { jitter: lognormalStepJitter(sigma, rngStream(o.seed, `engine.${o.index}.jitter`)) }
      : {}),
    ...(o.coldStart === undefined ? {} : { coldStart: o.coldStart }),
  });
  const facts = { modelName, maxModelLen: limits.maxModelLen, maxNumSeqs: limits.maxNumSeqs };
  const load = own
    ? { frontendPerTokenMs: base.frontendPerTokenMs, streamRatePerMs: () => engine.streamRatePerMs }
    : {};
  return { engine, tracked: engine, ...facts, ...api, ...load };
}
