/** Small fixtures shared by the engine tests. */

import type { VllmEngineConfig } from '../engine.js';
import { VllmEngine } from '../engine.js';
import type { EngineLimits } from '../profiles.js';
import { fittedStepTime } from '../step-time.js';
import type { Engine, EngineRequest, StepOutcome } from '../types.js';

/** Limits small enough to reason about by hand. */
export function smallLimits(overrides: Partial<EngineLimits> = {}): EngineLimits {
  return {
    maxNumSeqs: 8,
    maxNumBatchedTokens: 64,
    blockSize: 4,
    numGpuBlocks: 1000,
    maxModelLen: 4096,
    longPrefillTokenThreshold: 0,
    gpuMemoryUtilization: 0.9,
    ...overrides,
  };
}

/** An engine whose every step takes exactly 1 ms. */
export function unitStepEngine(
  limits: Partial<EngineLimits> = {},
  extra: Partial<VllmEngineConfig> = {},
): VllmEngine {
  return new VllmEngine({
    modelName: 'test-model',
    limits: smallLimits(limits),
    stepTime: fittedStepTime({ a: 1, b: 0, c: 0, d: 0 }),
    ...extra,
  });
}

/** Calls `step` at each `nextStepAt()` until the engine is idle (or `maxSteps`). */
export function runToIdle<R extends EngineRequest>(engine: Engine<R>, maxSteps = 10_000): StepOutcome<R>[] {
  const out: StepOutcome<R>[] = [];
  for (let t = engine.nextStepAt(); t !== null && out.length < maxSteps; t = engine.nextStepAt()) {
    out.push(engine.step(t));
  }
  return out;
}

/** Ids of a list of requests, joined. */
export function ids(rs: readonly EngineRequest[]): string {
  return rs.map((r) => r.id).join(',');
}
