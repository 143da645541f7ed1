import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { ENGINE_PROFILES } from '../scenario/schema.js';
import {
  buildEngine,
  catalogueEntry,
  EMULATED_PROFILES,
  ENGINE_CATALOGUE,
  FIXED_PROFILE,
  SIMULATED_PROFILES,
} from './catalogue.js';
import { ExponentialServerEngine } from './exponential-engine.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';
import type { Engine, EngineRequest } from './types.js';

/** Submits `n` one-token requests at 0 and returns when each finished, in finishing order. */
function finishTimes(engine: Engine<EngineRequest>, n: number): [string, number][] {
  for (let i = 0; i < n; i++) engine.submit({ id: `r${i}`, promptTokens: 1, outputTokens: 1 }, 0);
  const out: [string, number][] = [];
  for (let t = engine.nextStepAt(); t !== null; t = engine.nextStepAt()) {
    for (const f of engine.step(t).finished) out.push([f.request.id, t]);
  }
  return out;
}

describe('the engine catalogue', () => {
  it('lists each profile once: fixed, the analytic engines, then every deployment', () => {
    const names = ENGINE_CATALOGUE.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([
      FIXED_PROFILE,
      'exponential',
      'recorded',
      'fitted',
      ...Object.keys(DEPLOYMENT_PROFILES),
    ]);
  });

  it('is where the scenario format takes its profile names from', () => {
    expect(ENGINE_PROFILES).toEqual(SIMULATED_PROFILES);
    expect(SIMULATED_PROFILES).toEqual(ENGINE_CATALOGUE.filter((e) => e.simulated).map((e) => e.name));
  });

  it('the emulator serves fixed, every deployment and exponential, not recorded or fitted', () => {
    expect([...EMULATED_PROFILES].sort()).toEqual(
      ENGINE_CATALOGUE.filter((e) => e.emulated)
        .map((e) => e.name)
        .sort(),
    );
    expect(EMULATED_PROFILES).toContain('exponential');
    expect(EMULATED_PROFILES).not.toContain('recorded');
    expect(EMULATED_PROFILES).not.toContain('fitted');
  });

  it('every simulated profile builds an engine that reports per-request progress', () => {
    const fitted = { a: 5, b: 0.01, c: 0.5, d: 0 };
    for (const profile of SIMULATED_PROFILES) {
      const built = buildEngine({ profile, index: 0, seed: 1, ...(profile === 'fitted' ? { fitted } : {}) });
      expect(built.tracked, profile).toBe(built.engine);
    }
    expect(buildEngine({ profile: FIXED_PROFILE, index: 0, seed: 1 }).tracked).toBeUndefined();
  });

  it('refuses a name not in the catalogue, naming the known ones', () => {
    expect(catalogueEntry('vllm')).toBeUndefined();
    expect(() => buildEngine({ profile: 'vllm', index: 0, seed: 1 })).toThrow(
      /"vllm" is not one of fixed, exponential/,
    );
  });

  it('only deployments carry a frontend delay; the exponential engine has none', () => {
    const h100 = buildEngine({ profile: 'llama-3.1-8b-h100', index: 0, seed: 1 });
    expect(h100.apiOverheadMs).toBe(DEPLOYMENT_PROFILES['llama-3.1-8b-h100'].apiOverheadMs);
    const exp = buildEngine({ profile: 'exponential', index: 0, seed: 1 });
    expect([exp.apiOverheadMs, exp.apiJitterSigma]).toEqual([0, 0]);
  });

  it('the exponential engine draws the simulator stream engine.<index>.service of the seed', () => {
    const built = buildEngine({
      profile: 'exponential',
      index: 2,
      seed: 42,
      meanServiceMs: 100,
      limits: { maxNumSeqs: 3 },
    });
    expect(built.maxNumSeqs).toBe(3);
    const direct = new ExponentialServerEngine({
      modelName: 'exponential',
      servers: 3,
      meanServiceMs: 100,
      rng: rngStream(42, 'engine.2.service'),
    });
    const times = finishTimes(built.engine, 12);
    expect(times).toHaveLength(12);
    expect(times).toEqual(finishTimes(direct, 12));
    const other = buildEngine({
      profile: 'exponential',
      index: 3,
      seed: 42,
      meanServiceMs: 100,
      limits: { maxNumSeqs: 3 },
    });
    expect(finishTimes(other.engine, 12)).not.toEqual(times);
  });
});
