/**
 * Emulated engines on loopback for a real run: one emulated vLLM server per engine of the
 * scenario (or `count` of one profile), at a time scale, built by `startEmulator` from the engine
 * catalogue (`sim/engine/catalogue.ts`). The exponential engine (M/M/c checks) draws the
 * simulator's service-time stream (`engine.<i>.service` of the run seed): served in the same
 * order, requests get the same service times as in the simulation.
 */

import { EMULATOR_PROFILES, startEmulator } from '../loadgen/emulator/emulator.js';
import type { EngineGroup, Scenario } from '../sim/scenario/resolve.js';
import { UnsupportedScenarioError } from './errors.js';

/** A running emulated engine. */
export interface LiveEngine {
  url: string;
  port: number;
  profile: string;
  /** Engine RUNNING + WAITING now, and how late the engine's steps ran (engine ms). */
  load(): { running: number; waiting: number; lagMsMax: number };
  close(): Promise<void>;
}

/** What to start: one entry per engine. */
export interface EngineSpec {
  profile: string;
  maxNumSeqs?: number;
  /** `exponential` only: mean service time, engine ms. */
  meanServiceMs?: number;
  /** Pool index (the simulator's stream `engine.<index>.service`). */
  index: number;
}

/** Profiles a real run can start: the emulator's. */
export const RUNNABLE_PROFILES: readonly string[] = EMULATOR_PROFILES;

/** Group settings the emulator does not take (they make the real engine differ from the simulated one). */
const UNEMULATED: readonly (keyof EngineGroup)[] = [
  'max_num_batched_tokens',
  'num_gpu_blocks',
  'gpu_memory_utilization',
  'block_size',
  'max_model_len',
  'long_prefill_token_threshold',
  'api_overhead_ms',
  'cold_start',
  'fitted',
];

/**
 * The engines of a scenario, in pool order; with `override`, `count` engines of one profile
 * instead (the first group's settings kept when its profile is the same).
 * @throws Error naming a profile a real run cannot start
 */
export function engineSpecs(
  scenario: Scenario,
  override: { count?: number; profile?: string } = {},
): { specs: EngineSpec[]; notes: string[] } {
  const notes: string[] = [];
  let groups: { g: EngineGroup | undefined; profile: string; count: number }[];
  if (override.count !== undefined || override.profile !== undefined) {
    const first = scenario.engines[0];
    const profile = override.profile ?? first?.profile ?? 'llama-3.1-8b-h100';
    const count = override.count ?? scenario.endpoints.length;
    groups = [{ g: first?.profile === profile ? first : undefined, profile, count }];
  } else {
    groups = scenario.engines.map((g) => ({ g, profile: g.profile, count: g.count }));
  }
  const specs: EngineSpec[] = [];
  for (const { g, profile, count } of groups) {
    if (!RUNNABLE_PROFILES.includes(profile)) {
      throw new UnsupportedScenarioError(
        `engine profile ${profile}: not emulated (one of ${RUNNABLE_PROFILES.join(', ')}); pass --profile`,
      );
    }
    if (g && g.role !== 'normal')
      throw new UnsupportedScenarioError(`engine group ${g.name}: role ${g.role} is not emulated`);
    const off = g ? UNEMULATED.filter((k) => g[k] !== undefined) : [];
    if (g && off.length > 0)
      notes.push(`engine group ${g.name}: ${off.join(', ')} not emulated (the emulator uses the profile's)`);
    for (let i = 0; i < count; i++) {
      specs.push({
        profile,
        index: specs.length,
        ...(g?.max_num_seqs === undefined ? {} : { maxNumSeqs: g.max_num_seqs }),
        ...(g?.mean_service_ms === undefined ? {} : { meanServiceMs: g.mean_service_ms }),
      });
    }
  }
  return { specs, notes };
}

/** Starts the engines on 127.0.0.1, ephemeral ports. Closes those started if one fails. */
export async function startEngines(
  specs: readonly EngineSpec[],
  o: { timeScale: number; seed: number },
): Promise<LiveEngine[]> {
  const out: LiveEngine[] = [];
  try {
    for (const s of specs) out.push(await startEngine(s, o));
  } catch (err) {
    await Promise.all(out.map((e) => e.close()));
    throw err;
  }
  return out;
}

async function startEngine(s: EngineSpec, o: { timeScale: number; seed: number }): Promise<LiveEngine> {
  const emu = await startEmulator({
    profile: s.profile,
    timeScale: o.timeScale,
    port: 0,
    keepAliveTimeoutMs: 60_000,
    seed: o.seed,
    engineIndex: s.index,
    ...(s.maxNumSeqs === undefined ? {} : { maxNumSeqs: s.maxNumSeqs }),
    ...(s.meanServiceMs === undefined ? {} : { meanServiceMs: s.meanServiceMs }),
  });
  return {
    url: emu.url,
    port: emu.port,
    profile: s.profile,
    load: () => {
      const st = emu.stats();
      return { running: st.running, waiting: st.waiting, lagMsMax: st.lagMsMax };
    },
    close: () => emu.close(),
  };
}
