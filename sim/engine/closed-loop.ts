/**
 * A benchmark of one simulated engine, shaped like `vllm bench serve`: with `--max-concurrency
 * C --request-rate inf` (a closed loop) C clients each send a request, wait for its last
 * token and send the next at once, until `requests` have been sent; with a finite
 * `--request-rate` the requests are due at the client's Poisson or gamma send times
 * (`arrivals.ts`, an open loop), each still waiting for one of C slots when C is set. A request reaches the
 * engine `apiOverheadMs` after it is sent (the frontend; longer under load when the profile
 * has a `frontendPerTokenMs`, `frontend.ts`), and its TTFT and end are measured
 * from the send. The figures are vLLM's: TTFT, TPOT = (e2e − TTFT)/(output − 1) per request
 * (requests of one token have none), and output tokens/s = all output tokens over the time
 * from the first send to the last completion.
 *
 * The engine is stepped directly, one call per step on a µs clock, without the simulator's
 * event queue: this is the fidelity harness of the step-time model (`fidelity.ts`).
 */
import { rngStream } from '../kernel/rng.js';
import { benchSendTimes } from './arrivals.js';
import { VllmEngine } from './engine.js';
import { frontendDelayMs } from './frontend.js';
import { lognormalStepJitter } from './jitter.js';
import type { DeploymentProfile } from './profiles.js';
import { rooflineStepTime } from './step-time.js';
import type { EngineRequest } from './types.js';

/** The benchmark's workload. */
export interface ClosedLoopSpec {
  /** Clients (`--max-concurrency`); Infinity = no cap (an open loop without one). */
  readonly concurrency: number;
  /** `--request-rate`, requests/s; Infinity (the default) = every request due at once. */
  readonly requestRate?: number;
  /** `--burstiness`: shape of the gamma gaps between sends (1 = Poisson). @default 1 */
  readonly burstiness?: number;
  /** Requests sent in all (`--num-prompts`). */
  readonly requests: number;
  /** Prompt and output lengths of request i (cycled when shorter than `requests`). */
  readonly promptTokens: readonly number[];
  readonly outputTokens: readonly number[];
}

/** What `vllm bench serve` reports, from the simulated run. */
export interface ClosedLoopResult {
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly tpotP50Ms: number;
  readonly tpotP99Ms: number;
  readonly outputTokensPerSec: number;
  readonly completed: number;
}

interface Req extends EngineRequest {
  readonly sentMs: number;
  readonly atEngineMs: number;
  firstMs: number;
}

/** Nearest-rank-free percentile with linear interpolation (numpy's default, as vLLM uses). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  return a + ((sorted[hi] as number) - a) * (pos - lo);
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;
/** A time on the µs grid, ms. */
const us = round;

/** Runs the closed loop against one engine of `profile`, jittered from `seed`. */
export function runClosedLoop(profile: DeploymentProfile, spec: ClosedLoopSpec, seed = 1): ClosedLoopResult {
  const jitterSigma = profile.stepJitterSigma;
  const engine = new VllmEngine<Req>({
    modelName: profile.modelName,
    limits: profile.limits,
    stepTime: rooflineStepTime(profile.roofline),
    reportTokens: false,
    histograms: false,
    indexIds: false,
    ...(jitterSigma > 0
      ? { jitter: lognormalStepJitter(jitterSigma, rngStream(seed, 'engine.0.jitter')) }
      : {}),
  });
  const api = profile.apiOverheadMs;
  const apiRng = rngStream(seed, 'engine.0.api');
  const apiSigma = profile.apiJitterSigma;
  const perTokenMs = profile.frontendPerTokenMs;
  // Requests sent but not yet at the engine, by arrival time.
  const inFlight: Req[] = [];
  let sent = 0;
  const ttfts: number[] = [];
  const tpots: number[] = [];
  let outputTokens = 0;
  let lastEndMs = 0;
  const send = (nowMs: number): void => {
    if (sent >= spec.requests) return;
    const i = sent++;
    const n = spec.promptTokens.length;
    inFlight.push({
      id: String(i),
      promptTokens: spec.promptTokens[i % n] as number,
      outputTokens: spec.outputTokens[i % spec.outputTokens.length] as number,
      sentMs: nowMs,
      firstMs: Number.NaN,
      arrivalMs: nowMs,
      atEngineMs: us(
        nowMs +
          frontendDelayMs(
            apiSigma > 0 ? api * apiRng.lognormal(0, apiSigma) : api,
            perTokenMs,
            engine.streamRatePerMs,
          ),
      ),
    });
    inFlight.sort((a, b) => a.atEngineMs - b.atEngineMs);
  };
  const rate = spec.requestRate ?? Number.POSITIVE_INFINITY;
  const due =
    rate === Number.POSITIVE_INFINITY
      ? undefined
      : benchSendTimes(spec.requests, rate, spec.burstiness ?? 1, rngStream(seed, 'bench.arrivals'));
  let done = 0;
  // Sends whose due time has come while a slot is free, at `nowMs` (no later than it).
  const sendDue = (nowMs: number): void => {
    while (sent < spec.requests && sent - done < spec.concurrency) {
      const at = due === undefined ? 0 : (due[sent] as number);
      if (at > nowMs) return;
      send(nowMs);
    }
  };
  sendDue(0);
  while (done < spec.requests) {
    const nextArrival = inFlight.length > 0 ? (inFlight[0] as Req).atEngineMs : Number.POSITIVE_INFINITY;
    const nextStep = engine.nextStepAt() ?? Number.POSITIVE_INFINITY;
    const nextSend =
      due !== undefined && sent < spec.requests && sent - done < spec.concurrency
        ? (due[sent] as number)
        : Number.POSITIVE_INFINITY;
    if (nextSend <= nextArrival && nextSend <= nextStep && nextSend !== Number.POSITIVE_INFINITY) {
      sendDue(nextSend);
      continue;
    }
    if (nextArrival === Number.POSITIVE_INFINITY && nextStep === Number.POSITIVE_INFINITY) {
      throw new Error('internal: benchmark loop stalled (a request was refused)');
    }
    if (nextArrival <= nextStep) {
      const r = inFlight.shift() as Req;
      const res = engine.submit(r, nextArrival);
      if (!res.accepted)
        throw new RangeError(`request of ${r.promptTokens}+${r.outputTokens} tokens refused: ${res.reason}`);
      continue;
    }
    const out = engine.step(nextStep);
    for (const r of out.firstTokens) r.firstMs = nextStep;
    for (const f of out.finished) {
      const r = f.request;
      done++;
      const ttft = r.firstMs - r.sentMs;
      ttfts.push(ttft);
      if (r.outputTokens > 1) tpots.push((nextStep - r.firstMs) / (r.outputTokens - 1));
      outputTokens += r.outputTokens;
      lastEndMs = nextStep;
    }
    sendDue(nextStep);
  }
  ttfts.sort((a, b) => a - b);
  tpots.sort((a, b) => a - b);
  return {
    ttftP50Ms: round(percentile(ttfts, 0.5)),
    ttftP99Ms: round(percentile(ttfts, 0.99)),
    tpotP50Ms: round(percentile(tpots, 0.5)),
    tpotP99Ms: round(percentile(tpots, 0.99)),
    outputTokensPerSec: Math.round((outputTokens / (lastEndMs / 1000)) * 10) / 10,
    completed: done,
  };
}
