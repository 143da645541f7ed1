/**
 * `startEmulator(opts)`: an emulated vLLM server on the real clock, for tests, the load driver
 * and benchmarks. Listens on 127.0.0.1 and an ephemeral port unless told otherwise.
 */
import type { AddressInfo } from 'node:net';
import {
  buildEngine,
  EMULATED_PROFILES,
  FIXED_PROFILE,
  type FixedProfileOptions,
} from '../../sim/engine/catalogue.js';
import { VLLM_METRICS_VERSIONS, type VllmMetricsVersion } from '../../sim/engine/exposition.js';
import { frontendDelayMs } from '../../sim/engine/frontend.js';
import type { DeploymentProfile, DeploymentProfileId } from '../../sim/engine/profiles.js';
import { rngStream } from '../../sim/kernel/rng.js';
import { ScaledClock } from './clock.js';
import type { EmulatorContext, EmulatorStats } from './context.js';
import { checkFaults, type Faults, NO_FAULTS } from './faults.js';
import { type HostedRequest, RealClockEngineHost } from './host.js';
import { createEmulatorServer, statsOf } from './server.js';

export type { FixedProfileOptions } from '../../sim/engine/catalogue.js';
export type { EmulatorStats } from './context.js';
export { FIXED_PROFILE };

/** Every profile name the emulator accepts (`sim/engine/catalogue.ts`): `fixed`, the deployments, `exponential`. */
export const EMULATOR_PROFILES: readonly string[] = EMULATED_PROFILES;

/** The default profile. */
export const DEFAULT_PROFILE: DeploymentProfileId = 'llama-3.1-8b-h100';

/** Options of {@link startEmulator}; every field optional. */
export interface EmulatorOptions {
  /** Listen address. @default '127.0.0.1' */
  readonly host?: string;
  /** Listen port; 0 = ephemeral. @default 0 */
  readonly port?: number;
  /** Engine profile: `fixed`, a deployment of sim/engine/profiles.ts or `exponential`. @default 'llama-3.1-8b-h100' */
  readonly profile?: string;
  /** The profile with calibrated terms (`sluice calibrate --out`, for a deployment profile). @default none */
  readonly calibrated?: DeploymentProfile;
  /** Engine ms per real ms (2 = twice as fast as real time). @default 1 */
  readonly timeScale?: number;
  /** Served model name. @default the profile's */
  readonly model?: string;
  /** vLLM metric name set of `/metrics`. @default 'latest' */
  readonly metricsVersion?: VllmMetricsVersion;
  /** Seed of the error-rate draws. @default 0 */
  readonly seed?: number | string;
  /** Faults in force from the start. @default none */
  readonly faults?: Partial<Faults>;
  /** Timings of the `fixed` profile, engine ms. */
  readonly fixed?: FixedProfileOptions;
  /** `max_num_seqs` (the `fixed` profile's concurrency cap, the exponential engine's servers). @default the profile's (fixed: 8) */
  readonly maxNumSeqs?: number;
  /** `exponential` only: mean service time, engine ms. @default 1000 */
  readonly meanServiceMs?: number;
  /**
   * Pool index of this engine: its `engine` label, and with `seed` its random streams
   * (`engine.<index>.service` of the exponential engine, as in the simulator). @default 0
   */
  readonly engineIndex?: number;
  /** Output tokens when a request sets no max_tokens. @default 256 */
  readonly defaultMaxTokens?: number;
  /** Idle keep-alive connections close after this many real ms (uvicorn: 5 s). @default 5000 */
  readonly keepAliveTimeoutMs?: number;
}

/** A running emulator. */
export interface RunningEmulator {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  readonly port: number;
  /** Served model name. */
  readonly model: string;
  /** Merges fault settings into those in force (validated). @returns the faults now in force */
  setFaults(update: Partial<Faults>): Faults;
  /** The faults in force. */
  faults(): Faults;
  stats(): EmulatorStats;
  /** Drops every open request and connection, stops the engine and closes the listener. */
  close(): Promise<void>;
}

/** An invalid emulator option; the message names the option, its value and what was expected. */
export class EmulatorOptionError extends Error {
  override readonly name = 'EmulatorOptionError';
}

function check(ok: boolean, name: string, value: unknown, expected: string): void {
  if (!ok) throw new EmulatorOptionError(`${name}: ${JSON.stringify(value)} is not ${expected}`);
}

function checkOptions(o: EmulatorOptions): void {
  const int = (v: unknown, lo: number, hi: number) =>
    Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;
  if (o.port !== undefined) check(int(o.port, 0, 65535), 'port', o.port, 'an integer from 0 to 65535');
  if (o.profile !== undefined) {
    check(
      EMULATOR_PROFILES.includes(o.profile),
      'profile',
      o.profile,
      `one of ${EMULATOR_PROFILES.join(', ')}`,
    );
  }
  if (o.timeScale !== undefined) {
    const ok = Number.isFinite(o.timeScale) && o.timeScale >= 0.001 && o.timeScale <= 1000;
    check(ok, 'time-scale', o.timeScale, 'a number from 0.001 to 1000');
  }
  if (o.metricsVersion !== undefined) {
    const v = o.metricsVersion;
    check(
      VLLM_METRICS_VERSIONS.includes(v),
      'metrics-version',
      v,
      `one of ${VLLM_METRICS_VERSIONS.join(', ')}`,
    );
  }
  if (o.maxNumSeqs !== undefined)
    check(int(o.maxNumSeqs, 1, 65536), 'max-num-seqs', o.maxNumSeqs, 'an integer from 1 to 65536');
  if (o.meanServiceMs !== undefined) {
    const ok = Number.isFinite(o.meanServiceMs) && o.meanServiceMs > 0 && o.meanServiceMs <= 3_600_000;
    check(ok, 'mean-service-ms', o.meanServiceMs, 'a number of ms above 0 and at most 3600000');
  }
  if (o.engineIndex !== undefined)
    check(int(o.engineIndex, 0, 65535), 'engine-index', o.engineIndex, 'an integer from 0 to 65535');
  if (o.defaultMaxTokens !== undefined) {
    check(
      int(o.defaultMaxTokens, 1, 1_000_000),
      'default-max-tokens',
      o.defaultMaxTokens,
      'an integer from 1 to 1000000',
    );
  }
  for (const [k, v] of Object.entries(o.fixed ?? {})) {
    const ok = typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 3_600_000;
    check(ok, k === 'ttftMs' ? 'ttft-ms' : 'itl-ms', v, 'a number of ms from 0 to 3600000');
  }
  if (o.keepAliveTimeoutMs !== undefined) {
    check(
      int(o.keepAliveTimeoutMs, 0, 3_600_000),
      'keep-alive-timeout-ms',
      o.keepAliveTimeoutMs,
      'an integer from 0 to 3600000',
    );
  }
}

/**
 * Starts an emulated vLLM server.
 * @throws EmulatorOptionError or FaultError for invalid options (before listening)
 */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  checkOptions(opts);
  const initialFaults: Faults = { ...NO_FAULTS, ...checkFaults(opts.faults ?? {}) };
  let seq = 0;
  const ctxRef: { ctx?: EmulatorContext } = {};
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const built = buildEngine<HostedRequest>({
    profile,
    index: opts.engineIndex ?? 0,
    seed: opts.seed ?? 0,
    ...(opts.model === undefined ? {} : { modelName: opts.model }),
    ...(opts.maxNumSeqs === undefined ? {} : { limits: { maxNumSeqs: opts.maxNumSeqs } }),
    ...(opts.fixed === undefined ? {} : { fixed: opts.fixed }),
    ...(opts.meanServiceMs === undefined ? {} : { meanServiceMs: opts.meanServiceMs }),
    ...(opts.calibrated === undefined ? {} : { calibrated: opts.calibrated }),
    slowdown: () => ctxRef.ctx?.faults.slowdown ?? 1,
  });
  const clock = new ScaledClock(opts.timeScale ?? 1);
  const ctx: EmulatorContext = {
    host: new RealClockEngineHost(
      built.engine,
      clock,
      built.apiOverheadMs,
      built.frontendPerTokenMs > 0
        ? () => frontendDelayMs(built.apiOverheadMs, built.frontendPerTokenMs, built.streamRatePerMs())
        : undefined,
    ),
    modelName: built.modelName,
    maxModelLen: built.maxModelLen,
    defaultMaxTokens: opts.defaultMaxTokens ?? 256,
    metricsVersion: opts.metricsVersion ?? 'latest',
    errorRng: rngStream(opts.seed ?? 0, 'emulator.errors'),
    startedAtS: Math.floor(Date.now() / 1000),
    faults: initialFaults,
    counters: { requests: 0, invalid: 0, injectedErrors: 0, completed: 0, disconnected: 0, stalled: 0 },
    active: new Map(),
    nextId: () => (++seq).toString(16).padStart(8, '0'),
  };
  ctxRef.ctx = ctx;
  const server = createEmulatorServer(ctx, opts.keepAliveTimeoutMs ?? 5000);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    model: ctx.modelName,
    setFaults(update) {
      ctx.faults = { ...ctx.faults, ...checkFaults(update) };
      return ctx.faults;
    },
    faults: () => ctx.faults,
    stats: () => statsOf(ctx),
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
