/**
 * Calibration of a deployment profile from `vllm bench serve` results (the JSON written by
 * `--save-result`, formerly `benchmark_serving.py`; its fields are those `vllm/benchmarks/serve.py`
 * writes, https://github.com/vllm-project/vllm: `request_rate` ("inf" or requests/s),
 * `burstiness`, `max_concurrency` (null when unset), `num_prompts`, `completed`,
 * `total_input_tokens`, `total_output_tokens`, `median_ttft_ms`, `median_tpot_ms`,
 * `output_throughput`, and with `--save-detailed` the per-request `input_lens`/`output_lens`).
 * Every result is replayed as the same run (`closed-loop.ts`: a closed loop of
 * `max_concurrency` clients, or the client's Poisson/gamma send times at `request_rate`) and
 * four physical terms are fitted so that the simulated TTFT p50, TPOT p50 and output tokens/s
 * match the measured ones: the achieved HBM bandwidth share η (decode floor), the host work
 * per sequence t_host (the slope once the host bounds a step), the prefill MFU and the
 * frontend delay.
 *
 * The fit minimises Σ ρ(ln(simulated/measured)) over the three figures of every point, with
 * the Cauchy loss ρ(r) = ln(1 + (r/0.1)²), by Nelder–Mead over the logs of the terms. Near 0
 * it is the least-squares fit of the log errors; a point off by far more than 10%, which no
 * value of the terms brings near, weighs only logarithmically, so it does not pull the
 * others away.
 *
 * Results without the figures, a single result (five terms need several loads) and results
 * that contradict each other are refused with a message naming the file, field, value and
 * bound.
 */

import { rngStream } from '../kernel/rng.js';
import { type ClosedLoopResult, type ClosedLoopSpec, runClosedLoop } from './closed-loop.js';
import type { DeploymentProfile } from './profiles.js';

/** A measured point, from one result file. */
export interface BenchPoint {
  /** Where it came from (a file name), for messages and the table. */
  readonly label: string;
  /** `max_concurrency`; Infinity when the run set none. */
  readonly concurrency: number;
  /** `request_rate`, requests/s; Infinity for `inf`. */
  readonly requestRate: number;
  /** `burstiness` (gamma shape of the send gaps; 1 = Poisson). */
  readonly burstiness: number;
  readonly requests: number;
  readonly promptTokens: readonly number[];
  readonly outputTokens: readonly number[];
  readonly ttftP50Ms: number;
  readonly tpotP50Ms: number;
  readonly outputTokensPerSec: number;
}

/** Bad calibration input: the message names the file, the field, its value and the bound. */
export class CalibrationInputError extends Error {
  override readonly name = 'CalibrationInputError';
}

const show = (v: unknown): string => (v === undefined ? 'missing' : JSON.stringify(v));

const num = (o: Record<string, unknown>, k: string, label: string): number => {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new CalibrationInputError(
      `${label}: field ${k} is ${show(v)}; expected a number > 0 (a vllm bench serve --save-result file has it)`,
    );
  }
  return v;
};

const lens = (o: Record<string, unknown>, k: string, label: string): number[] | undefined => {
  const v = o[k];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new CalibrationInputError(
      `${label}: field ${k} is ${JSON.stringify(v).slice(0, 60)}; expected a non-empty list of token counts (integers >= 0)`,
    );
  }
  return v as number[];
};

/**
 * Lengths when a result lists none: its mean, spread uniformly ±25% (equal lengths would lock a
 * closed loop into step; see `published.ts`).
 */
export function spreadAround(mean: number, n: number, name: string): number[] {
  const rng = rngStream(1, name);
  const lo = Math.max(1, Math.round(mean * 0.75));
  const hi = Math.max(lo, Math.round(mean * 1.25));
  return Array.from({ length: n }, () => rng.int(lo, hi));
}

/** `request_rate`: "inf" (or Infinity) or a number > 0, requests/s. */
function requestRate(o: Record<string, unknown>, label: string): number {
  const v = o.request_rate;
  if (v === undefined || v === 'inf' || v === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  throw new CalibrationInputError(
    `${label}: field request_rate is ${show(v)}; expected "inf" or a number of requests/s > 0`,
  );
}

/** One `vllm bench serve` result object as a point. */
export function parseBenchResult(json: unknown, label: string): BenchPoint {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new CalibrationInputError(
      `${label}: not a vllm bench serve result (expected a JSON object, got ${Array.isArray(json) ? 'a list' : show(json)})`,
    );
  }
  const o = json as Record<string, unknown>;
  const rate = requestRate(o, label);
  const conc = o.max_concurrency;
  if (!(conc === undefined || conc === null || (Number.isInteger(conc) && (conc as number) >= 1))) {
    throw new CalibrationInputError(
      `${label}: field max_concurrency is ${show(conc)}; expected an integer >= 1, or null (no cap)`,
    );
  }
  const concurrency = typeof conc === 'number' ? conc : Number.POSITIVE_INFINITY;
  const b = o.burstiness;
  if (!(b === undefined || (typeof b === 'number' && b > 0))) {
    throw new CalibrationInputError(`${label}: field burstiness is ${show(b)}; expected a number > 0`);
  }
  const burstiness = typeof b === 'number' ? b : 1;
  const completed = num(o, 'completed', label);
  const ttft = num(o, 'median_ttft_ms', label);
  const tpot = num(o, 'median_tpot_ms', label);
  const tput = num(o, 'output_throughput', label);
  const np = o.num_prompts;
  if (np !== undefined && !(Number.isInteger(np) && (np as number) >= completed)) {
    throw new CalibrationInputError(
      `${label}: field num_prompts is ${show(np)}; expected an integer >= completed (${completed})`,
    );
  }
  const requests = Math.round(typeof np === 'number' ? np : completed);
  const ins = lens(o, 'input_lens', label);
  const outs = lens(o, 'output_lens', label);
  if ((ins === undefined) !== (outs === undefined) || (ins !== undefined && ins.length !== outs?.length)) {
    throw new CalibrationInputError(
      `${label}: fields input_lens and output_lens have ${ins?.length ?? 'no'} and ${outs?.length ?? 'no'} entries; expected both, of equal length`,
    );
  }
  const shape = { label, concurrency, requestRate: rate, burstiness };
  const figures = { ttftP50Ms: ttft, tpotP50Ms: tpot, outputTokensPerSec: tput };
  if (ins !== undefined && outs !== undefined) {
    // Failed requests are listed with 0 output tokens; keep the ones that returned some.
    const keep = outs.map((n, i) => (n > 0 ? i : -1)).filter((i) => i >= 0);
    if (keep.length === 0) {
      throw new CalibrationInputError(`${label}: field output_lens lists no request with output > 0`);
    }
    return {
      ...shape,
      requests: keep.length,
      promptTokens: keep.map((i) => Math.max(1, ins[i] as number)),
      outputTokens: keep.map((i) => outs[i] as number),
      ...figures,
    };
  }
  return {
    ...shape,
    requests,
    promptTokens: spreadAround(num(o, 'total_input_tokens', label) / completed, requests, `${label}.in`),
    outputTokens: spreadAround(num(o, 'total_output_tokens', label) / completed, requests, `${label}.out`),
    ...figures,
  };
}

/** The load of a point, as the table and messages name it. */
export function loadOf(p: Pick<BenchPoint, 'concurrency' | 'requestRate' | 'burstiness'>): string {
  const c = p.concurrency === Number.POSITIVE_INFINITY ? '' : `concurrency ${p.concurrency}`;
  const r =
    p.requestRate === Number.POSITIVE_INFINITY
      ? ''
      : `rate ${p.requestRate}/s${p.burstiness === 1 ? '' : ` burstiness ${p.burstiness}`}`;
  return [c, r].filter((x) => x !== '').join(' ') || 'all at once';
}

const loadKey = (p: BenchPoint): string => `${p.concurrency}/${p.requestRate}/${p.burstiness}`;
/** Offered load, for ordering: concurrency, else rate. */
const loadLevel = (p: BenchPoint): number =>
  p.requestRate === Number.POSITIVE_INFINITY ? p.concurrency : Math.min(p.concurrency, p.requestRate);

/** Refuses point sets that cannot determine the fit. */
export function checkPoints(points: readonly BenchPoint[]): void {
  if (points.length < 2) {
    throw new CalibrationInputError(
      `need at least 2 results at different loads, got ${points.length}: one point cannot separate the decode floor from the per-sequence cost`,
    );
  }
  if (new Set(points.map(loadKey)).size < 2) {
    throw new CalibrationInputError(
      `all ${points.length} results have the same load (${loadOf(points[0] as BenchPoint)}): need at least 2 different max_concurrency or request_rate values`,
    );
  }
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sameShape = (a: BenchPoint, b: BenchPoint): boolean =>
    Math.abs(mean(a.promptTokens) / mean(b.promptTokens) - 1) < 0.1 &&
    Math.abs(mean(a.outputTokens) / mean(b.outputTokens) - 1) < 0.1;
  for (const a of points) {
    for (const b of points) {
      if (a === b || !sameShape(a, b)) continue;
      if (loadKey(a) === loadKey(b) && a.tpotP50Ms > 1.5 * b.tpotP50Ms) {
        throw new CalibrationInputError(
          `${a.label} and ${b.label} contradict each other: same load (${loadOf(a)}) and lengths, median_tpot_ms ${a.tpotP50Ms} vs ${b.tpotP50Ms} (at most 1.5x apart)`,
        );
      }
      // More load, same shape, much faster tokens: no engine slows down that way.
      const sameKind =
        (a.requestRate === Number.POSITIVE_INFINITY) === (b.requestRate === Number.POSITIVE_INFINITY);
      if (sameKind && loadLevel(a) > loadLevel(b) && a.tpotP50Ms * 1.5 < b.tpotP50Ms) {
        throw new CalibrationInputError(
          `${a.label} and ${b.label} contradict each other: ${a.label} (${loadOf(a)}) has median_tpot_ms ${a.tpotP50Ms}, under ${b.tpotP50Ms}/1.5 of ${b.label} (${loadOf(b)}) at less load`,
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
  /** Frontend work per streamed output token, ms (`frontend.ts`); absent in files written before it = 0. */
  readonly frontendPerTokenMs: number;
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
    frontendPerTokenMs: t.frontendPerTokenMs,
  };
}

/** Requests simulated per point: enough for stable medians, capped to keep a fit fast. */
const simRequests = (p: BenchPoint): number =>
  Math.min(p.requests, Math.max(10 * Math.min(p.concurrency, 100), 40), 400);

const specOf = (p: BenchPoint, requests: number): ClosedLoopSpec => ({
  concurrency: p.concurrency,
  requestRate: p.requestRate,
  burstiness: p.burstiness,
  requests,
  promptTokens: p.promptTokens,
  outputTokens: p.outputTokens,
});

function simulate(profile: DeploymentProfile, points: readonly BenchPoint[]): ClosedLoopResult[] {
  return points.map((p) => runClosedLoop(profile, specOf(p, simRequests(p)), 1));
}

/** Scale of the Cauchy loss on log errors: errors well under it count as squares. */
const LOSS_SCALE = 0.1;
const cauchy = (r: number): number => Math.log1p((r / LOSS_SCALE) ** 2);
const square = (r: number): number => (r / LOSS_SCALE) ** 2;

function loss(
  points: readonly BenchPoint[],
  sims: readonly ClosedLoopResult[],
  rho: (r: number) => number,
): number {
  let l = 0;
  points.forEach((p, i) => {
    const s = sims[i] as ClosedLoopResult;
    l += rho(Math.log(s.tpotP50Ms / p.tpotP50Ms));
    l += rho(Math.log(s.ttftP50Ms / p.ttftP50Ms));
    l += rho(Math.log(s.outputTokensPerSec / p.outputTokensPerSec));
  });
  return Number.isFinite(l) ? l : Number.POSITIVE_INFINITY;
}

const BOUNDS: readonly [number, number][] = [
  [0.2, 1], // η
  [0.001, 20], // t_host, ms
  [0.05, 1], // mfu
  [0.01, 200], // frontend, ms
  [0.001, 2], // frontend per streamed token, ms (the lower bound: no load term to speak of)
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
    // Four coordinates: the fit without the frontend's load term.
    frontendPerTokenMs: x.length > 4 ? (v[4] as number) : 0,
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

/**
 * Starting points of the fit besides the base profile's terms: a coarse log grid over the
 * physical range of each (η, t_host ms, MFU, frontend ms). A simulated run's figures are step
 * functions of the terms (whole steps, whole requests), so a simplex started far off can sit
 * on a plateau where one term does nothing (t_host below where the host binds); the grid puts
 * the start in the right basin.
 */
const GRID: readonly (readonly number[])[] = [
  [0.5, 0.7, 0.9],
  [0.03, 0.055, 0.1, 0.18, 0.33, 0.6, 1.1, 2],
  [0.25, 0.45, 0.7],
  [0.5, 4, 15],
  [0.001, 0.4],
];

/** Options of {@link calibrate}. */
export interface CalibrateOptions {
  /**
   * Fit the frontend's load term (`frontendPerTokenMs`, `frontend.ts`); false holds it at 0,
   * for a deployment whose frontend is not shared with the output stream (several API
   * server processes, or a separate router doing the streaming). @default true
   */
  readonly frontendLoad?: boolean;
}

/**
 * Fits the five terms of `base` to `points` (four with `frontendLoad: false`): the best of
 * the grid and the base's own terms by least squares of the log errors, refined by
 * Nelder–Mead on it, then on the Cauchy loss from there (so a point the model cannot come
 * near stops pulling the others), `iterations` each. Deterministic: the same points give the
 * same terms.
 */
export function calibrate(
  base: DeploymentProfile,
  points: readonly BenchPoint[],
  iterations = 120,
  options: CalibrateOptions = {},
): Calibration {
  checkPoints(points);
  const f =
    (rho: (r: number) => number) =>
    (x: number[]): number =>
      loss(points, simulate(withTerms(base, terms(x)), points), rho);
  const r = base.roofline;
  const load = options.frontendLoad !== false;
  const own = [r.memEfficiency, Math.max(r.hostPerSeqMs, 0.01), r.mfu, Math.max(base.apiOverheadMs, 0.1)];
  const starts: number[][] = [load ? [...own, Math.max(base.frontendPerTokenMs, 0.001)] : own];
  for (const a of GRID[0] as number[])
    for (const b of GRID[1] as number[])
      for (const c of GRID[2] as number[])
        for (const d of GRID[3] as number[]) {
          if (!load) starts.push([a, b, c, d]);
          else for (const e of GRID[4] as number[]) starts.push([a, b, c, d, e]);
        }
  const ls = f(square);
  let x0 = starts[0]?.map(Math.log) as number[];
  let best = Number.POSITIVE_INFINITY;
  for (const st of starts) {
    const x = st.map(Math.log);
    const l = ls(x);
    if (l < best) [best, x0] = [l, x];
  }
  const x1 = nelderMead(ls, x0, 0.3, iterations);
  const t = terms(nelderMead(f(cauchy), x1, 0.1, iterations));
  const profile = withTerms(base, t);
  const sims = points.map((p) => runClosedLoop(profile, specOf(p, p.requests), 1));
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
  const names = ['memEfficiency', 'hostPerSeqMs', 'mfu', 'apiOverheadMs', 'frontendPerTokenMs'] as const;
  const v = names.map((k, i) => {
    const given = (t as Record<string, unknown>)[k];
    // Files written before the frontend's load term have none: a constant frontend delay.
    if (k === 'frontendPerTokenMs' && given === undefined) return 0;
    const x = given;
    // 0 (no load term) is a valid value in a file; the fit's log space stops at the bound.
    const [lo, hi] =
      k === 'frontendPerTokenMs' ? [0, (BOUNDS[i] as [number, number])[1]] : (BOUNDS[i] as [number, number]);
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
    frontendPerTokenMs: v[4] as number,
  });
}
