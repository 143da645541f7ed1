/**
 * Simulated vs published: each published sweep point (`published.ts`) run as a closed loop
 * against its profile (`closed-loop.ts`), with the relative error of every figure.
 */
import { rngStream } from '../kernel/rng.js';
import { type ClosedLoopResult, runClosedLoop } from './closed-loop.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';
import {
  type FidelityMetric,
  type Lengths,
  PUBLISHED_SWEEPS,
  type PublishedSweep,
  TOLERANCE,
} from './published.js';

/** One figure of one point. */
export interface FidelityRow {
  readonly profile: string;
  readonly concurrency: number;
  readonly metric: FidelityMetric;
  readonly published: number;
  readonly simulated: number;
  /** (simulated − published) / published. */
  readonly relError: number;
  readonly tolerance: number;
  readonly claimed: boolean;
  /** Why the figure is not claimed. */
  readonly why?: string;
}

function lengths(l: Lengths, n: number, name: string, seed: number): readonly number[] {
  if (Array.isArray(l)) return l as readonly number[];
  const { mean, spread } = l as { mean: number; spread: number };
  const rng = rngStream(seed, name);
  const lo = Math.max(1, Math.round(mean * (1 - spread)));
  const hi = Math.round(mean * (1 + spread));
  return Array.from({ length: n }, () => rng.int(lo, hi));
}

function figure(m: FidelityMetric, r: ClosedLoopResult, first: ClosedLoopResult): number {
  switch (m) {
    case 'tpot_p50_ms':
      return r.tpotP50Ms;
    case 'ttft_p50_ms':
      return r.ttftP50Ms;
    case 'output_tokens_per_s':
      return r.outputTokensPerSec;
    case 'output_tokens_per_s_vs_first':
      return Math.round((r.outputTokensPerSec / first.outputTokensPerSec) * 1000) / 1000;
  }
}

/** Simulates every point of `sweep` and compares it with the published figures. */
export function evaluateSweep(sweep: PublishedSweep, seed = 1): FidelityRow[] {
  const profile = DEPLOYMENT_PROFILES[sweep.profile];
  const results = sweep.points.map((p) =>
    runClosedLoop(
      profile,
      {
        concurrency: p.concurrency,
        requests: p.requests,
        promptTokens: lengths(p.promptTokens, p.requests, 'fidelity.prompt', seed),
        outputTokens: lengths(p.outputTokens, p.requests, 'fidelity.output', seed),
      },
      seed,
    ),
  );
  const rows: FidelityRow[] = [];
  sweep.points.forEach((p, i) => {
    const r = results[i] as ClosedLoopResult;
    const first = results[0] as ClosedLoopResult;
    const add = (metric: FidelityMetric, published: number, claimed: boolean, why?: string): void => {
      const simulated = figure(metric, r, first);
      rows.push({
        profile: sweep.profile,
        concurrency: p.concurrency,
        metric,
        published,
        simulated,
        relError: (simulated - published) / published,
        tolerance: TOLERANCE[metric],
        claimed,
        ...(why === undefined ? {} : { why }),
      });
    };
    for (const [m, v] of Object.entries(p.claimed) as [FidelityMetric, number][]) add(m, v, true);
    for (const [m, n] of Object.entries(p.notClaimed ?? {}) as [
      FidelityMetric,
      { value: number; why: string },
    ][]) {
      add(m, n.value, false, n.why);
    }
  });
  return rows;
}

/** Every published sweep, evaluated. */
export function evaluateAll(seed = 1): { sweep: PublishedSweep; rows: FidelityRow[] }[] {
  return PUBLISHED_SWEEPS.map((sweep) => ({ sweep, rows: evaluateSweep(sweep, seed) }));
}
