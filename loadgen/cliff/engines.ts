/**
 * Emulated engines on loopback for a real run: one emulated vLLM server per engine of the
 * scenario (or `count` of one profile), at a time scale. Deployment profiles and `fixed` come from
 * `startEmulator`. The simulator's `exponential` engine (M/M/c checks) is not an emulator profile
 * yet, so it is served here by the emulator's own server and real-clock host around the
 * simulator's `ExponentialServerEngine`, with the simulator's service-time stream
 * (`engine.<i>.service` of the run seed): served in the same order, requests get the same
 * service times as in the simulation.
 */
import type { AddressInfo } from 'node:net';
import { ExponentialServerEngine } from '../../sim/engine/exponential-engine.js';
import { rngStream } from '../../sim/kernel/rng.js';
import type { EngineGroup, Scenario } from '../../sim/scenario/resolve.js';
import { ScaledClock } from '../emulator/clock.js';
import type { EmulatorContext } from '../emulator/context.js';
import { startEmulator } from '../emulator/emulator.js';
import { NO_FAULTS } from '../emulator/faults.js';
import { type HostedRequest, RealClockEngineHost } from '../emulator/host.js';
import { EMULATOR_PROFILES } from '../emulator/profiles.js';
import { createEmulatorServer } from '../emulator/server.js';
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

/** Profiles a real run can start: the emulator's plus `exponential`. */
export const RUNNABLE_PROFILES: readonly string[] = [...EMULATOR_PROFILES, 'exponential'];

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
  if (s.profile === 'exponential') return startExponential(s, o);
  const emu = await startEmulator({
    profile: s.profile,
    timeScale: o.timeScale,
    port: 0,
    keepAliveTimeoutMs: 60_000,
    ...(s.maxNumSeqs === undefined ? {} : { maxNumSeqs: s.maxNumSeqs }),
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

/** An M/M/c engine behind the emulator's HTTP server (see the module comment). */
async function startExponential(s: EngineSpec, o: { timeScale: number; seed: number }): Promise<LiveEngine> {
  const servers = s.maxNumSeqs ?? 256;
  const engine = new ExponentialServerEngine<HostedRequest>({
    modelName: 'exponential',
    engineIndex: String(s.index),
    servers,
    meanServiceMs: s.meanServiceMs ?? 1000,
    rng: rngStream(o.seed, `engine.${s.index}.service`),
  });
  let seq = 0;
  const ctx: EmulatorContext = {
    host: new RealClockEngineHost(engine, new ScaledClock(o.timeScale), 0),
    modelName: 'exponential',
    maxModelLen: 1_000_000,
    defaultMaxTokens: 256,
    metricsVersion: 'latest',
    errorRng: rngStream(0, 'emulator.errors'),
    startedAtS: Math.floor(Date.now() / 1000),
    faults: { ...NO_FAULTS },
    counters: { requests: 0, invalid: 0, injectedErrors: 0, completed: 0, disconnected: 0, stalled: 0 },
    active: new Map(),
    nextId: () => `x${s.index}-${(++seq).toString(16)}`,
  };
  const server = createEmulatorServer(ctx, 60_000);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    profile: 'exponential',
    load: () => {
      const e = ctx.host.engine;
      return { running: e.numRunning, waiting: e.numWaiting, lagMsMax: ctx.host.stats().lagMsMax };
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const abandon of [...ctx.active.values()]) abandon();
        ctx.host.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
