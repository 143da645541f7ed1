/**
 * `sluice engine --port N [--host H] [--profile NAME] [--time-scale X] [--model NAME] ...`:
 * an emulated vLLM server (OpenAI API, /metrics, /health) whose timing comes from the
 * simulator's engine model on the real clock. Faults can be set by flags at start and changed
 * at run time through `POST /admin/faults`. Runs until SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import {
  DEFAULT_PROFILE,
  EMULATOR_PROFILES,
  EmulatorOptionError,
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from '../loadgen/emulator/emulator.js';
import { FaultError, type Faults } from '../loadgen/emulator/faults.js';
import { applyCalibratedProfile } from '../sim/engine/calibrate.js';
import { VLLM_METRICS_VERSIONS, type VllmMetricsVersion } from '../sim/engine/exposition.js';
import { parseProfileFileText, profileFileBase } from '../sim/engine/profile-file.js';
import {
  DEPLOYMENT_PROFILES,
  type DeploymentProfile,
  type DeploymentProfileId,
} from '../sim/engine/profiles.js';
import { intArg, reportError, UsageError } from './errors.js';

/** Parses a finite number flag within [min, max], naming the flag in the error. */
function numArg(flag: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${flag}: ${JSON.stringify(value)} is not a number from ${min} to ${max}`,
      );
    }
    return n;
  };
}

function oneOf<T extends string>(flag: string, allowed: readonly T[]) {
  return (value: string): T => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
    }
    return value as T;
  };
}

interface EngineFlags {
  port: number;
  host: string;
  /** Absent: the base of --profile-file, else the default profile. */
  profile?: string;
  profileFile?: string;
  timeScale: number;
  model?: string;
  metricsVersion: VllmMetricsVersion;
  seed: number;
  ttftMs?: number;
  itlMs?: number;
  maxNumSeqs?: number;
  meanServiceMs?: number;
  defaultMaxTokens: number;
  keepAliveTimeoutMs: number;
  slowdown?: number;
  errorRate?: number;
  errorStatus?: number;
  metricsOutage?: boolean;
  healthDown?: boolean;
  stallMs?: number;
  stallAfterTokens?: number;
  json?: boolean;
}

function optionsOf(f: EngineFlags): EmulatorOptions {
  const file = f.profileFile === undefined ? undefined : readProfileFile(f.profileFile);
  const profile = f.profile ?? (file === undefined ? DEFAULT_PROFILE : profileFileBase(file, f.profileFile!));
  const faults: Partial<Faults> = {
    ...(f.slowdown === undefined ? {} : { slowdown: f.slowdown }),
    ...(f.errorRate === undefined ? {} : { errorRate: f.errorRate }),
    ...(f.errorStatus === undefined ? {} : { errorStatus: f.errorStatus }),
    ...(f.metricsOutage ? { metricsOutage: true } : {}),
    ...(f.healthDown ? { health: 'down' as const } : {}),
    ...(f.stallMs === undefined ? {} : { stallMs: f.stallMs }),
    ...(f.stallAfterTokens === undefined ? {} : { stallAfterTokens: f.stallAfterTokens }),
  };
  return {
    host: f.host,
    port: f.port,
    profile,
    timeScale: f.timeScale,
    metricsVersion: f.metricsVersion,
    seed: f.seed,
    defaultMaxTokens: f.defaultMaxTokens,
    keepAliveTimeoutMs: f.keepAliveTimeoutMs,
    faults,
    ...(f.model === undefined ? {} : { model: f.model }),
    ...(f.maxNumSeqs === undefined ? {} : { maxNumSeqs: f.maxNumSeqs }),
    ...(f.meanServiceMs === undefined ? {} : { meanServiceMs: f.meanServiceMs }),
    ...(file === undefined ? {} : { calibrated: calibratedOf(profile, file, f.profileFile!) }),
    fixed: {
      ...(f.ttftMs === undefined ? {} : { ttftMs: f.ttftMs }),
      ...(f.itlMs === undefined ? {} : { itlMs: f.itlMs }),
    },
  };
}

/** The parsed `--profile-file`. */
function readProfileFile(file: string): unknown {
  try {
    return parseProfileFileText(readFileSync(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    throw new UsageError(`--profile-file: ${(err as Error).message}`);
  }
}

/** The built-in `profile` with the terms of a `sluice calibrate --out` file. */
function calibratedOf(profile: string, json: unknown, file: string): DeploymentProfile {
  if (!(profile in DEPLOYMENT_PROFILES)) {
    throw new UsageError(`--profile-file: only for a deployment profile (--profile is ${profile})`);
  }
  const id = profile as DeploymentProfileId;
  return applyCalibratedProfile(json, id, DEPLOYMENT_PROFILES[id], file);
}

/** Waits for SIGINT or SIGTERM. */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: string) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** Test seams of {@link engineCommand}. */
export interface EngineCommandHooks {
  /** Resolves when the server should stop. @default SIGINT or SIGTERM */
  readonly until?: () => Promise<unknown>;
  /** Called once the server listens. */
  readonly onStart?: (emu: RunningEmulator) => void;
}

export function engineCommand(hooks: EngineCommandHooks = {}): Command {
  return new Command('engine')
    .description('serve an emulated vLLM engine (OpenAI API, /metrics, /health) on the real clock')
    .requiredOption('--port <n>', 'listen port (0 = ephemeral)', intArg('--port', 0, 65535))
    .option('--host <addr>', 'listen address', '127.0.0.1')
    .option(
      '--profile <name>',
      `engine profile: ${EMULATOR_PROFILES.join(', ')} (default: the base of --profile-file, else ${DEFAULT_PROFILE})`,
      oneOf('--profile', EMULATOR_PROFILES),
    )
    .option(
      '--profile-file <file>',
      'a profile fitted by sluice calibrate --out (YAML or JSON), applied to its base profile',
    )
    .option(
      '--time-scale <x>',
      'engine ms per real ms (2 = twice as fast as real time)',
      numArg('--time-scale', 0.001, 1000),
      1,
    )
    .option('--model <name>', "served model name (default: the profile's)")
    .option(
      '--metrics-version <v>',
      `vLLM metric names: ${VLLM_METRICS_VERSIONS.join(', ')}`,
      oneOf('--metrics-version', VLLM_METRICS_VERSIONS),
      'latest',
    )
    .option(
      '--seed <n>',
      "seed of the error-rate draws (and of the exponential profile's service times)",
      intArg('--seed', 0, 2 ** 32 - 1),
      0,
    )
    .option(
      '--ttft-ms <ms>',
      'fixed profile: time to first token, engine ms (default 50)',
      numArg('--ttft-ms', 0, 3_600_000),
    )
    .option(
      '--itl-ms <ms>',
      'fixed profile: inter-token time, engine ms (default 10)',
      numArg('--itl-ms', 0, 3_600_000),
    )
    .option(
      '--max-num-seqs <n>',
      "max_num_seqs; the fixed profile's concurrency cap (default 8), the exponential profile's servers",
      intArg('--max-num-seqs', 1, 65536),
    )
    .option(
      '--mean-service-ms <ms>',
      'exponential profile: mean service time, engine ms (default 1000)',
      numArg('--mean-service-ms', 0.001, 3_600_000),
    )
    .option(
      '--default-max-tokens <n>',
      'output tokens when a request sets no max_tokens',
      intArg('--default-max-tokens', 1, 1_000_000),
      256,
    )
    .option(
      '--keep-alive-timeout-ms <ms>',
      'close idle keep-alive connections after this long',
      intArg('--keep-alive-timeout-ms', 0, 3_600_000),
      5000,
    )
    .option('--slowdown <x>', 'fault: step-time multiplier', numArg('--slowdown', 0.01, 1000))
    .option(
      '--error-rate <p>',
      'fault: fraction of requests answered with --error-status',
      numArg('--error-rate', 0, 1),
    )
    .option(
      '--error-status <code>',
      'fault: status of injected errors (default 500)',
      intArg('--error-status', 400, 599),
    )
    .option('--metrics-outage', 'fault: GET /metrics answers 503')
    .option('--health-down', 'fault: GET /health answers 503')
    .option(
      '--stall-ms <ms>',
      'fault: real ms each response pauses mid-stream',
      numArg('--stall-ms', 0, 3_600_000),
    )
    .option(
      '--stall-after-tokens <n>',
      'fault: tokens written before the stall (default 1)',
      intArg('--stall-after-tokens', 0, 1_000_000),
    )
    .option('--json', 'print the listening address as one JSON object')
    .action(async (flags: EngineFlags) => {
      try {
        const emu = await startEmulator(optionsOf(flags)).catch((err: unknown) => {
          if (err instanceof EmulatorOptionError || err instanceof FaultError)
            throw new UsageError(err.message);
          const code = (err as NodeJS.ErrnoException | null)?.code;
          if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
            throw new UsageError(`--host/--port: cannot listen on ${flags.host}:${flags.port} (${code})`);
          }
          throw err;
        });
        const info = {
          url: emu.url,
          port: emu.port,
          model: emu.model,
          profile: flags.profile,
          timeScale: flags.timeScale,
        };
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(info)}\n`
            : `sluice engine: ${emu.model} (profile ${flags.profile}, time scale ${flags.timeScale}) on ${emu.url}\n`,
        );
        hooks.onStart?.(emu);
        await (hooks.until ?? untilSignal)();
        await emu.close();
      } catch (err) {
        reportError(err);
      }
    });
}
