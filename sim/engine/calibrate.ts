/**
 * Calibration of a deployment profile from `vllm bench serve` results (the JSON written by
 * `--save-result`, formerly `benchmark_serving.py`): every result is replayed as the same
 * closed loop (`closed-loop.ts`) and four physical terms are fitted so that the simulated
 * TTFT p50, TPOT p50 and output tokens/s match the measured ones: the achieved HBM
 * bandwidth share η (decode floor), the host work per sequence t_host (the slope once the
 * host bounds a step), the prefill MFU and the frontend delay. The fit minimises the sum of
 * squared log errors (TTFT at half weight) by Nelder–Mead over the logs of the parameters.
 *
 * Only closed-loop runs are taken (`max_concurrency` set with `request_rate` inf): an
 * open-loop run is refused, as are results without the figures, a single result (four
 * terms need several concurrencies) and results that contradict each other.
 */

import { rngStream } from '../kernel/rng.js';
import { type ClosedLoopResult, runClosedLoop } from './closed-loop.js';
import type { DeploymentProfile } from './profiles.js';

/** A measured point, from one result file. */
export interface BenchPoint {
  /** Where it came from (a file name), for messages and the table. */
  readonly label: string;
  readonly concurrency: number;
  readonly requests: number;
  readonly promptTokens: readonly number[];
  readonly outputTokens: readonly number[];
  readonly ttftP50Ms: number;
  readonly tpotP50Ms: number;
  readonly outputTokensPerSec: number;
}

/** Bad calibration input: the message names the file and the field. */
export class CalibrationInputError extends Error {
  override readonly name = 'CalibrationInputError';
}

const num = (o: Record<string, unknown>, k: string, label: string): number => {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new CalibrationInputError(
      `${label}: field ${k} missing or not a number (a vllm bench serve --save-result file has it)`,
    );
  }
  return v;
};

const lens = (o: Record<string, unknown>, k: string): number[] | undefined => {
  const v = o[k];
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0)
    ? (v as number[])
    : undefined;
};

/**
 * Lengths when a result lists none: its mean, spread uniformly ±25% (equal lengths would lock a
 * closed loop into step; see `published.ts`).
 */
function spreadAround(mean: number, n: number, name: string): number[] {
  const rng = rngStream(1, name);
  const lo = Math.max(1, Math.round(mean * 0.75));
  const hi = Math.max(lo, Math.round(mean * 1.25));
  return Array.from({ length: n }, () => rng.int(lo, hi));
}

/** One `vllm bench serve` result object as a point. */
export function parseBenchResult(json: unknown, label: string): BenchPoint {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new CalibrationInputError(`${label}: not a vllm bench serve result (expected a JSON object)`);
  }
  const o = json as Record<string, unknown>;
  const rate = o.request_rate;
  const conc = o.max_concurrency;
  const closed = typeof conc === 'number' && Number.isInteger(conc) && conc >= 1;
  if (!closed) {
    throw new CalibrationInputError(
      `${label}: max_concurrency missing; only closed-loop runs (--max-concurrency N --request-rate inf) can be calibrated from`,
    );
  }
  if (rate !== undefined && rate !== 'inf' && rate !== Number.POSITIVE_INFINITY) {
    throw new CalibrationInputError(
      `${label}: request_rate ${String(rate)}: open-loop runs are not supported, use --request-rate inf`,
    );
  }
  const completed = num(o, 'completed', label);
  if (completed < 1) throw new CalibrationInputError(`${label}: completed is 0, nothing was measured`);
  const ttft = num(o, 'median_ttft_ms', label);
  const tpot = num(o, 'median_tpot_ms', label);
  const tput = num(o, 'output_throughput', label);
  const requests = Math.round(typeof o.num_prompts === 'number' ? o.num_prompts : completed);
  const ins = lens(o, 'input_lens');
  const outs = lens(o, 'output_lens');
  const promptTokens =
    ins ?? spreadAround(num(o, 'total_input_tokens', label) / completed, requests, `${label}.in`);
  const outputTokens =
    outs ?? spreadAround(num(o, 'total_output_tokens', label) / completed, requests, `${label}.out`);
  if (ins !== undefined && outs !== undefined) {
    // Failed requests are listed with 0 output tokens; keep the ones that returned some.
    const keep = outs.map((n, i) => (n > 0 ? i : -1)).filter((i) => i >= 0);
    return {
      label,
      concurrency: conc,
      requests: keep.length,
      promptTokens: keep.map((i) => Math.max(1, ins[i] as number)),
      outputTokens: keep.map((i) => outs[i] as number),
      ttftP50Ms: ttft,
      tpotP50Ms: tpot,
      outputTokensPerSec: tput,
    };
  }
  if (!(ttft > 0 && tpot > 0 && tput > 0)) {
    throw new CalibrationInputError(
      `${label}: median_ttft_ms, median_tpot_ms and output_throughput must be > 0`,
    );
  }
  return {
    label,
    concurrency: conc,
    requests,
    promptTokens,
    outputTokens,
    ttftP50Ms: ttft,
    tpotP50Ms: tpot,
    outputTokensPerSec: tput,
  };
}

/** Refuses point sets that cannot determine the fit. */
export function checkPoints(points: readonly BenchPoint[]): void {
  if (points.length < 2) {
    throw new CalibrationInputError(
      `need at least 2 results at different concurrencies, got ${points.length}: one point cannot separate the decode floor from the per-sequence cost`,
    );
  }
  if (new Set(points.map((p) => p.concurrency)).size < 2) {
    throw new CalibrationInputError(
      'all results have the same max_concurrency: need at least 2 different ones',
    );
  }
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const a of points) {
    for (const b of points) {
      if (a === b || a.concurrency !== b.concurrency) continue;
      const sameShape =
        Math.abs(mean(a.promptTokens) / mean(b.promptTokens) - 1) < 0.1 &&
        Math.abs(mean(a.outputTokens) / mean(b.outputTokens) - 1) < 0.1;
      if (sameShape && a.tpotP50Ms > 1.5 * b.tpotP50Ms) {
        throw new CalibrationInputError(
          `${a.label} and ${b.label} contradict each other: same concurrency (${a.concurrency}) and lengths, TPOT ${a.tpotP50Ms} vs ${b.tpotP50Ms} ms`,
        );
      }
    }
    for (const b of points) {
      // More concurrency, same shape, much faster tokens: no engine slows down that way.
      const sameShape =
        Math.abs(mean(a.promptTokens) / mean(b.promptTokens) - 1) < 0.1 &&
        Math.abs(mean(a.outputTokens) / mean(b.outputTokens) - 1) < 0.1;
      if (sameShape && a.concurrency > b.concurrency && a.tpotP50Ms * 1.5 < b.tpotP50Ms) {
        throw new CalibrationInputError(
          `${a.label} and ${b.label} contradict each other: concurrency ${a.concurrency} has TPOT ${a.tpotP50Ms} ms, under ${b.tpotP50Ms} ms at concurrency ${b.concurrency}`,
        );
      }
    }
  }
}

/** The fitted terms. */
export interface CalibratedTerms {
  readonly memEfficiency: number;
  readonly hostPerSeqMs: number;
  readonly mfu: number;
  readonly apiOverheadMs: number;
}

/** Measured vs fitted, per point. */
export interface CalibrationRow {
  readonly point: BenchPoint;
  readonly fitted: ClosedLoopResult;
}

/** The result of a fit. */
export interface Calibration {
  readonly profile: DeploymentProfile;
  readonly terms: CalibratedTerms;
  readonly rows: readonly CalibrationRow[];
}

function withTerms(base: DeploymentProfile, t: CalibratedTerms): DeploymentProfile {
  return {
    ...base,
    roofline: { ...base.roofline, memEfficiency: t.memEfficiency, hostPerSeqMs: t.hostPerSeqMs, mfu: t.mfu },
    apiOverheadMs: t.apiOverheadMs,
  };
}

/** Requests simulated per point: enough for stable medians, capped to keep a fit fast. */
const simRequests = (p: BenchPoint): number => Math.min(p.requests, Math.max(10 * p.concurrency, 40), 400);

function simulate(profile: DeploymentProfile, points: readonly BenchPoint[]): ClosedLoopResult[] {
  return points.map((p) =>
    runClosedLoop(
      profile,
      {
        concurrency: p.concurrency,
        requests: simRequests(p),
        promptTokens: p.promptTokens,
        outputTokens: p.outputTokens,
      },
      1,
    ),
  );
}

function loss(points: readonly BenchPoint[], sims: readonly ClosedLoopResult[]): number {
  let l = 0;
  points.forEach((p, i) => {
    const s = sims[i] as ClosedLoopResult;
    l += Math.log(s.tpotP50Ms / p.tpotP50Ms) ** 2;
    l += 0.5 * Math.log(s.ttftP50Ms / p.ttftP50Ms) ** 2;
    l += Math.log(s.outputTokensPerSec / p.outputTokensPerSec) ** 2;
  });
  return Number.isFinite(l) ? l : Number.POSITIVE_INFINITY;
}

const BOUNDS: readonly [number, number][] = [
  [0.2, 1], // η
  [0.001, 20], // t_host, ms
  [0.05, 1], // mfu
  [0.01, 200], // frontend, ms
];

function terms(x: readonly number[]): CalibratedTerms {
  const v = x.map((xi, i) => {
    const [lo, hi] = BOUNDS[i] as [number, number];
    return Math.min(hi, Math.max(lo, Math.exp(xi)));
  });
  return {
    memEfficiency: v[0] as number,
    hostPerSeqMs: v[1] as number,
    mfu: v[2] as number,
    apiOverheadMs: v[3] as number,
  };
}

/** Nelder–Mead on f over R^n from x0 with initial step `step`, `iterations` at most. */
function nelderMead(f: (x: number[]) => number, x0: number[], step: number, iterations: number): number[] {
  const n = x0.length;
  let simplex = [x0, ...x0.map((_, i) => x0.map((v, j) => (j === i ? v + step : v)))].map((x) => ({
    x,
    f: f(x),
  }));
  for (let it = 0; it < iterations; it++) {
    simplex.sort((a, b) => a.f - b.f);
    const best = simplex[0] as { x: number[]; f: number };
    const worst = simplex[n] as { x: number[]; f: number };
    if ((simplex[n] as { f: number }).f - best.f < 1e-6) break;
    const centroid = x0.map((_, j) => simplex.slice(0, n).reduce((s, p) => s + (p.x[j] as number), 0) / n);
    const at = (t: number): number[] => centroid.map((c, j) => c + t * ((worst.x[j] as number) - c));
    const r = { x: at(-1), f: 0 };
    r.f = f(r.x);
    if (r.f < best.f) {
      const e = { x: at(-2), f: 0 };
      e.f = f(e.x);
      simplex[n] = e.f < r.f ? e : r;
    } else if (r.f < (simplex[n - 1] as { f: number }).f) {
      simplex[n] = r;
    } else {
      const c = { x: at(0.5), f: 0 };
      c.f = f(c.x);
      if (c.f < worst.f) simplex[n] = c;
      else {
        simplex = simplex.map((p, i) =>
          i === 0
            ? p
            : { x: p.x.map((v, j) => (best.x[j] as number) + 0.5 * (v - (best.x[j] as number))), f: 0 },
        );
        for (const p of simplex.slice(1)) p.f = f(p.x);
      }
    }
  }
  simplex.sort((a, b) => a.f - b.f);
  return (simplex[0] as { x: number[] }).x;
}

/** Fits the four terms of `base` to `points`. */
export function calibrate(
  base: DeploymentProfile,
  points: readonly BenchPoint[],
  iterations = 120,
): Calibration {
  checkPoints(points);
  const f = (x: number[]): number => loss(points, simulate(withTerms(base, terms(x)), points));
  const r = base.roofline;
  const x0 = [r.memEfficiency, Math.max(r.hostPerSeqMs, 0.01), r.mfu, Math.max(base.apiOverheadMs, 0.1)].map(
    Math.log,
  );
  const t = terms(nelderMead(f, x0, 0.3, iterations));
  const profile = withTerms(base, t);
  const sims = points.map((p) =>
    runClosedLoop(
      profile,
      {
        concurrency: p.concurrency,
        requests: p.requests,
        promptTokens: p.promptTokens,
        outputTokens: p.outputTokens,
      },
      1,
    ),
  );
  return {
    profile,
    terms: t,
    rows: points.map((point, i) => ({ point, fitted: sims[i] as ClosedLoopResult })),
  };
}

/** What `sluice calibrate --out` writes and a scenario's `profile_file` reads. */
export interface CalibratedProfileFile {
  /** The built-in profile the terms replace those of. */
  readonly base: string;
  readonly terms: CalibratedTerms;
}

/** The file content for a calibration of `baseId`. */
export function calibratedProfileFile(baseId: string, cal: Calibration): CalibratedProfileFile {
  return { base: baseId, terms: cal.terms };
}

/**
 * `base` with the terms of a calibrated profile file applied; the file must name `baseId` as
 * its base. @throws CalibrationInputError naming the field that is wrong
 */
export function applyCalibratedProfile(
  json: unknown,
  baseId: string,
  base: DeploymentProfile,
  label: string,
): DeploymentProfile {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new CalibrationInputError(
      `${label}: not a profile written by sluice calibrate (expected a JSON object)`,
    );
  }
  const o = json as Record<string, unknown>;
  if (o.base !== baseId) {
    throw new CalibrationInputError(
      `${label}: base is ${JSON.stringify(o.base)}, but it is applied to profile ${baseId} (use the file's base as the profile)`,
    );
  }
  const t = o.terms;
  if (t === null || typeof t !== 'object') throw new CalibrationInputError(`${label}: terms missing`);
  const names = ['memEfficiency', 'hostPerSeqMs', 'mfu', 'apiOverheadMs'] as const;
  const v = names.map((k, i) => {
    const x = (t as Record<string, unknown>)[k];
    const [lo, hi] = BOUNDS[i] as [number, number];
    if (typeof x !== 'number' || !(x >= lo && x <= hi)) {
      throw new CalibrationInputError(
        `${label}: terms.${k} is ${JSON.stringify(x)}; expected a number from ${lo} to ${hi}`,
      );
    }
    return x;
  });
  return withTerms(base, {
    memEfficiency: v[0] as number,
    hostPerSeqMs: v[1] as number,
    mfu: v[2] as number,
    apiOverheadMs: v[3] as number,
  });
}
