/**
 * Open-loop arrival processes: pure generators of arrival times (ms of virtual time) that depend only on
 * their config and the RNG they are given, never on how the system responds.
 */
import { ClientConfigError, requireInteger, requireNonNegative, requirePositive } from './errors.js';
import { nextArrivalMs, type RateProfile, type RateSegment } from './rate-profile.js';
import { exponential, type RandomFn } from './rng.js';

/**
 * A source of arrival times. Each call returns the next arrival (ms, never earlier than the previous
 * one; several arrivals may share a time) or undefined once the process has finished.
 */
export interface ArrivalProcess {
  next(): number | undefined;
}

/** Fields shared by every arrival config. */
export interface ArrivalCommon {
  /** Virtual time of the start of the process, ms. Default 0. */
  startMs?: number;
  /** Stop after this many arrivals. Default unlimited. */
  maxArrivals?: number;
}

/** Evenly spaced arrivals: one every `1000 / ratePerSec` ms, the first at `startMs`. */
export interface ConstantArrivalConfig extends ArrivalCommon {
  kind: 'constant';
  /** Requests per second. */
  ratePerSec: number;
  /** Length of the process, ms. Default unlimited. */
  durationMs?: number;
}

/** Homogeneous Poisson process. */
export interface PoissonArrivalConfig extends ArrivalCommon {
  kind: 'poisson';
  /** Mean requests per second. */
  ratePerSec: number;
  /** Length of the process, ms. Default unlimited. */
  durationMs?: number;
}

/** Poisson process whose rate moves linearly from `fromRatePerSec` to `toRatePerSec` over `durationMs`. */
export interface RampArrivalConfig extends ArrivalCommon {
  kind: 'ramp';
  fromRatePerSec: number;
  toRatePerSec: number;
  /** Length of the ramp, ms; the process ends with it. */
  durationMs: number;
}

/** Poisson process with a piecewise-constant rate, the steps one after another. */
export interface StepArrivalConfig extends ArrivalCommon {
  kind: 'step';
  steps: readonly { durationMs: number; ratePerSec: number }[];
}

/**
 * Poisson base traffic plus a spike at `spikeAtMs` (relative to `startMs`): either an extra Poisson
 * rate `spikeRatePerSec` for `spikeDurationMs`, or `spikeCount` requests all at once.
 */
export interface SpikeArrivalConfig extends ArrivalCommon {
  kind: 'spike';
  baseRatePerSec: number;
  /** Length of the process, ms. */
  durationMs: number;
  /** Start of the spike, ms after `startMs`. */
  spikeAtMs: number;
  /** Extra rate during the spike, requests per second (with `spikeDurationMs`). */
  spikeRatePerSec?: number;
  /** Length of the spike, ms (with `spikeRatePerSec`). */
  spikeDurationMs?: number;
  /** Requests sent all at `spikeAtMs` (instead of a rate). */
  spikeCount?: number;
}

/**
 * Poisson process with rate `mean + amplitude · sin(2π (t + phaseMs) / periodMs)`, sampled exactly by
 * thinning a Poisson process of rate `mean + amplitude`.
 */
export interface DiurnalArrivalConfig extends ArrivalCommon {
  kind: 'diurnal';
  meanRatePerSec: number;
  /** Swing around the mean, requests per second; at most the mean. */
  amplitudePerSec: number;
  periodMs: number;
  /** Shift of the sine, ms. Default 0 (the rate starts at the mean, rising). */
  phaseMs?: number;
  durationMs: number;
}

/** Replay of recorded arrival times (ms from the trace start), compressed by `speedup`. */
export interface TraceArrivalConfig extends ArrivalCommon {
  kind: 'trace';
  /** Recorded arrival times, ms, non-decreasing. */
  atMs: readonly number[];
  /** Time compression: 2 replays the trace twice as fast. Default 1. */
  speedup?: number;
}

/** A plain arrival-process config, as found in a scenario file. */
export type ArrivalConfig =
  | ConstantArrivalConfig
  | PoissonArrivalConfig
  | RampArrivalConfig
  | StepArrivalConfig
  | SpikeArrivalConfig
  | DiurnalArrivalConfig
  | TraceArrivalConfig;

/**
 * Builds an arrival process from a plain config. Random kinds draw from `rng` only.
 * @throws ClientConfigError when a parameter is out of range.
 */
export function createArrivalProcess(
  config: ArrivalConfig,
  rng: RandomFn,
  field = 'arrival',
): ArrivalProcess {
  const startMs = requireNonNegative(`${field}.startMs`, config.startMs ?? 0);
  const process = createUnlimited(config, rng, field, startMs);
  if (config.maxArrivals === undefined) return process;
  return limitArrivals(process, requireInteger(`${field}.maxArrivals`, config.maxArrivals, 0));
}

function createUnlimited(
  config: ArrivalConfig,
  rng: RandomFn,
  field: string,
  startMs: number,
): ArrivalProcess {
  const endOf = (durationMs: number | undefined): number =>
    durationMs === undefined
      ? Number.POSITIVE_INFINITY
      : startMs + requireNonNegative(`${field}.durationMs`, durationMs);
  switch (config.kind) {
    case 'constant':
      return constantArrivals(
        requirePositive(`${field}.ratePerSec`, config.ratePerSec),
        startMs,
        endOf(config.durationMs),
      );
    case 'poisson':
      return poissonArrivals(
        requirePositive(`${field}.ratePerSec`, config.ratePerSec),
        rng,
        startMs,
        endOf(config.durationMs),
      );
    case 'ramp':
      return profileArrivals(
        [
          {
            startMs,
            endMs: endOf(config.durationMs),
            startRatePerSec: requireNonNegative(`${field}.fromRatePerSec`, config.fromRatePerSec),
            endRatePerSec: requireNonNegative(`${field}.toRatePerSec`, config.toRatePerSec),
          },
        ],
        rng,
      );
    case 'step': {
      if (config.steps.length === 0)
        throw new ClientConfigError(`${field}.steps`, config.steps, 'a non-empty list');
      const segments: RateSegment[] = [];
      let t = startMs;
      config.steps.forEach((s, i) => {
        const d = requireNonNegative(`${field}.steps[${i}].durationMs`, s.durationMs);
        const r = requireNonNegative(`${field}.steps[${i}].ratePerSec`, s.ratePerSec);
        segments.push({ startMs: t, endMs: t + d, startRatePerSec: r, endRatePerSec: r });
        t += d;
      });
      return profileArrivals(segments, rng);
    }
    case 'spike':
      return spikeArrivals(config, rng, field, startMs);
    case 'diurnal':
      return diurnalArrivals(config, rng, field, startMs);
    case 'trace':
      return traceArrivals(
        config.atMs,
        requirePositive(`${field}.speedup`, config.speedup ?? 1),
        startMs,
        field,
      );
  }
}

/** Evenly spaced arrivals from `startMs` (inclusive) to `endMs` (exclusive). */
export function constantArrivals(
  ratePerSec: number,
  startMs = 0,
  endMs = Number.POSITIVE_INFINITY,
): ArrivalProcess {
  const intervalMs = 1000 / ratePerSec;
  let i = 0;
  return {
    next() {
      const t = startMs + i * intervalMs;
      if (t >= endMs) return undefined;
      i += 1;
      return t;
    },
  };
}

/** Homogeneous Poisson arrivals in [startMs, endMs): exponential gaps, one RNG draw per arrival. */
export function poissonArrivals(
  ratePerSec: number,
  rng: RandomFn,
  startMs = 0,
  endMs = Number.POSITIVE_INFINITY,
): ArrivalProcess {
  const meanGapMs = 1000 / ratePerSec;
  let t = startMs;
  let done = false;
  return {
    next() {
      if (done) return undefined;
      t += exponential(rng, meanGapMs);
      if (t >= endMs) {
        done = true;
        return undefined;
      }
      return t;
    },
  };
}

/** Non-homogeneous Poisson arrivals following a piecewise-linear rate profile (exact, by time rescaling). */
export function profileArrivals(profile: RateProfile, rng: RandomFn): ArrivalProcess {
  let t = profile[0]?.startMs ?? 0;
  let done = false;
  return {
    next() {
      if (done) return undefined;
      const n = nextArrivalMs(profile, t, rng);
      if (n === undefined) {
        done = true;
        return undefined;
      }
      t = n;
      return n;
    },
  };
}

function spikeArrivals(
  config: SpikeArrivalConfig,
  rng: RandomFn,
  field: string,
  startMs: number,
): ArrivalProcess {
  const base = requireNonNegative(`${field}.baseRatePerSec`, config.baseRatePerSec);
  const endMs = startMs + requireNonNegative(`${field}.durationMs`, config.durationMs);
  const spikeStart = startMs + requireNonNegative(`${field}.spikeAtMs`, config.spikeAtMs);
  if (config.spikeCount !== undefined) {
    if (config.spikeRatePerSec !== undefined) {
      throw new ClientConfigError(
        `${field}.spikeRatePerSec`,
        config.spikeRatePerSec,
        'left out when spikeCount is set',
      );
    }
    const count = requireInteger(`${field}.spikeCount`, config.spikeCount, 0);
    const baseProcess = profileArrivals(
      [{ startMs, endMs, startRatePerSec: base, endRatePerSec: base }],
      rng,
    );
    return mergeArrivals([baseProcess, burstArrivals(spikeStart, spikeStart < endMs ? count : 0)]);
  }
  if (config.spikeRatePerSec === undefined || config.spikeDurationMs === undefined) {
    throw new ClientConfigError(
      `${field}.spikeRatePerSec`,
      config.spikeRatePerSec,
      'a rate >= 0 given with spikeDurationMs (or use spikeCount)',
    );
  }
  const extra = requireNonNegative(`${field}.spikeRatePerSec`, config.spikeRatePerSec);
  const spikeEnd = Math.min(
    endMs,
    spikeStart + requireNonNegative(`${field}.spikeDurationMs`, config.spikeDurationMs),
  );
  const segments: RateSegment[] = [];
  const push = (a: number, b: number, r: number): void => {
    if (b > a) segments.push({ startMs: a, endMs: b, startRatePerSec: r, endRatePerSec: r });
  };
  push(startMs, Math.min(spikeStart, endMs), base);
  push(spikeStart, spikeEnd, base + extra);
  push(Math.max(spikeEnd, startMs), endMs, base);
  return profileArrivals(segments, rng);
}

function diurnalArrivals(
  config: DiurnalArrivalConfig,
  rng: RandomFn,
  field: string,
  startMs: number,
): ArrivalProcess {
  const mean = requirePositive(`${field}.meanRatePerSec`, config.meanRatePerSec);
  const amp = requireNonNegative(`${field}.amplitudePerSec`, config.amplitudePerSec);
  if (amp > mean)
    throw new ClientConfigError(`${field}.amplitudePerSec`, amp, `at most meanRatePerSec (${mean})`);
  const periodMs = requirePositive(`${field}.periodMs`, config.periodMs);
  const phaseMs = config.phaseMs ?? 0;
  const endMs = startMs + requireNonNegative(`${field}.durationMs`, config.durationMs);
  return thinnedArrivals(
    (t) => mean + amp * Math.sin((2 * Math.PI * (t - startMs + phaseMs)) / periodMs),
    mean + amp,
    rng,
    startMs,
    endMs,
  );
}

/**
 * Non-homogeneous Poisson arrivals by thinning (Lewis–Shedler): candidates at `maxRatePerSec`, each kept
 * with probability rate(t) / maxRatePerSec. Exact when rate(t) <= maxRatePerSec throughout; two RNG
 * draws per candidate.
 */
export function thinnedArrivals(
  ratePerSecAt: (tMs: number) => number,
  maxRatePerSec: number,
  rng: RandomFn,
  startMs = 0,
  endMs = Number.POSITIVE_INFINITY,
): ArrivalProcess {
  const meanGapMs = 1000 / maxRatePerSec;
  let t = startMs;
  let done = false;
  return {
    next() {
      while (!done) {
        t += exponential(rng, meanGapMs);
        if (t >= endMs) break;
        if (rng() * maxRatePerSec < ratePerSecAt(t)) return t;
      }
      done = true;
      return undefined;
    },
  };
}

/** `count` arrivals all at `atMs`. */
export function burstArrivals(atMs: number, count: number): ArrivalProcess {
  let left = count;
  return {
    next() {
      if (left <= 0) return undefined;
      left -= 1;
      return atMs;
    },
  };
}

/** Replay of recorded times (ms from trace start), divided by `speedup` and shifted to `startMs`. */
export function traceArrivals(
  atMs: readonly number[],
  speedup = 1,
  startMs = 0,
  field = 'arrival',
): ArrivalProcess {
  let i = 0;
  let prev = Number.NEGATIVE_INFINITY;
  return {
    next() {
      const raw = atMs[i];
      if (raw === undefined) return undefined;
      if (!(Number.isFinite(raw) && raw >= prev)) {
        throw new ClientConfigError(`${field}.atMs[${i}]`, raw, `a time >= the previous one (${prev})`);
      }
      prev = raw;
      i += 1;
      return startMs + raw / speedup;
    },
  };
}

/**
 * Superposition of several processes: the earliest head first; on a tie the process listed first.
 * Each source is asked for one arrival ahead.
 */
export function mergeArrivals(sources: readonly ArrivalProcess[]): ArrivalProcess {
  const merged = mergeIndexed(sources);
  return { next: () => merged.next()?.atMs };
}

/** {@link mergeArrivals}, telling which source (index into `sources`) each arrival came from. */
export function mergeIndexed(sources: readonly ArrivalProcess[]): {
  next(): { atMs: number; source: number } | undefined;
} {
  const heads = sources.map((s) => s.next());
  return {
    next() {
      let best = -1;
      let bestT = Number.POSITIVE_INFINITY;
      heads.forEach((h, i) => {
        if (h !== undefined && (best < 0 || h < bestT)) {
          best = i;
          bestT = h;
        }
      });
      if (best < 0) return undefined;
      heads[best] = sources[best]?.next();
      return { atMs: bestT, source: best };
    },
  };
}

/** At most `maxArrivals` arrivals of `source`. */
export function limitArrivals(source: ArrivalProcess, maxArrivals: number): ArrivalProcess {
  let n = 0;
  return {
    next() {
      if (n >= maxArrivals) return undefined;
      n += 1;
      return source.next();
    },
  };
}

/** Drains a process into an array: every arrival before `untilMs` (exclusive), at most `limit` of them. */
export function takeArrivals(
  source: ArrivalProcess,
  untilMs = Number.POSITIVE_INFINITY,
  limit = 10_000_000,
): number[] {
  const out: number[] = [];
  while (out.length < limit) {
    const t = source.next();
    if (t === undefined || t >= untilMs) break;
    out.push(t);
  }
  return out;
}
