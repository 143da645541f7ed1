/**
 * Engine profiles the emulator can serve: every built-in deployment of `sim/engine/profiles.ts`
 * (the vLLM step model) plus `fixed` (constant timings, see `fixed-engine.ts`).
 */
import { VllmEngine } from '../../sim/engine/engine.js';
import {
  DEPLOYMENT_PROFILES,
  type DeploymentProfile,
  type DeploymentProfileId,
} from '../../sim/engine/profiles.js';
import { rooflineStepTime } from '../../sim/engine/step-time.js';
import type { Engine, EngineRequest } from '../../sim/engine/types.js';
import { FixedEngine } from './fixed-engine.js';

/** Name of the constant-timing profile. */
export const FIXED_PROFILE = 'fixed';

/** Every profile name the emulator accepts: `fixed` first, then the deployments. */
export const EMULATOR_PROFILES: readonly string[] = [FIXED_PROFILE, ...Object.keys(DEPLOYMENT_PROFILES)];

/** The default profile. */
export const DEFAULT_PROFILE: DeploymentProfileId = 'llama-3.1-8b-h100';

/** Settings of the `fixed` profile. */
export interface FixedProfileOptions {
  /** Admission to first token, engine ms. @default 50 */
  readonly ttftMs?: number;
  /** Between tokens, engine ms. @default 10 */
  readonly itlMs?: number;
}

/** What building a profile needs. */
export interface ProfileBuildOptions {
  readonly profile: string;
  /** Overrides the profile's `model_name`. */
  readonly model?: string;
  /** Overrides `max_num_seqs` (the `fixed` profile's concurrency cap). */
  readonly maxNumSeqs?: number;
  readonly fixed?: FixedProfileOptions;
  /** Current slowdown factor, read whenever a step or token is timed. */
  readonly slowdown: () => number;
  /** The deployment profile with calibrated terms (`sluice calibrate`), instead of the built-in one. */
  readonly calibrated?: DeploymentProfile;
}

/** A built engine and the facts the HTTP layer needs about it. */
export interface BuiltProfile<R extends EngineRequest> {
  readonly engine: Engine<R>;
  /** Served model name (`/v1/models`, `model` field, `model_name` label). */
  readonly modelName: string;
  /** Longest prompt + output accepted, tokens. */
  readonly maxModelLen: number;
  /** Frontend delay before a request reaches the engine, engine ms. */
  readonly apiOverheadMs: number;
  /** `max_num_seqs` in force. */
  readonly maxNumSeqs: number;
}

/** The `fixed` profile's concurrency cap when not given. */
const FIXED_DEFAULT_CONCURRENCY = 8;
/** The `fixed` profile's `max_model_len`. */
const FIXED_MAX_MODEL_LEN = 131_072;

/** True if `name` is a profile the emulator can build. */
export function isEmulatorProfile(name: string): boolean {
  return EMULATOR_PROFILES.includes(name);
}

/**
 * Builds the engine of a profile.
 * @throws RangeError for an unknown profile name
 */
export function buildProfile<R extends EngineRequest>(o: ProfileBuildOptions): BuiltProfile<R> {
  if (o.profile === FIXED_PROFILE) {
    const modelName = o.model ?? 'sluice/fixed';
    const maxNumSeqs = o.maxNumSeqs ?? FIXED_DEFAULT_CONCURRENCY;
    const engine = new FixedEngine<R>({
      modelName,
      ttftMs: o.fixed?.ttftMs ?? 50,
      itlMs: o.fixed?.itlMs ?? 10,
      maxConcurrency: maxNumSeqs,
      maxModelLen: FIXED_MAX_MODEL_LEN,
      slowdown: o.slowdown,
    });
    return { engine, modelName, maxModelLen: FIXED_MAX_MODEL_LEN, apiOverheadMs: 0, maxNumSeqs };
  }
  if (!(o.profile in DEPLOYMENT_PROFILES)) {
    throw new RangeError(
      `profile: ${JSON.stringify(o.profile)} is not one of ${EMULATOR_PROFILES.join(', ')}`,
    );
  }
  const base = o.calibrated ?? DEPLOYMENT_PROFILES[o.profile as DeploymentProfileId];
  const modelName = o.model ?? base.modelName;
  const maxNumSeqs = o.maxNumSeqs ?? base.limits.maxNumSeqs;
  const limits = {
    ...base.limits,
    maxNumSeqs,
    maxNumBatchedTokens: Math.max(base.limits.maxNumBatchedTokens, maxNumSeqs),
  };
  const model = rooflineStepTime(base.roofline);
  const slowdown = o.slowdown;
  const engine = new VllmEngine<R>({
    modelName,
    limits,
    stepTime: (shape) => model(shape) * slowdown(),
  });
  return {
    engine,
    modelName,
    maxModelLen: limits.maxModelLen,
    apiOverheadMs: base.apiOverheadMs,
    maxNumSeqs,
  };
}
