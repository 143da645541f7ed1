/**
 * Send times of a `vllm bench serve` run, as its client draws them (`get_request` in
 * vllm/benchmarks/serve.py, https://github.com/vllm-project/vllm): with `--request-rate inf`
 * every request is due at once; with a finite rate R and `--burstiness b` the gaps are
 * Gamma(shape b, scale 1/(R·b)) (b = 1: Poisson arrivals), summed and then rescaled so that
 * the last request is due at exactly N/R seconds, as vLLM does to steady its throughput.
 * `--max-concurrency` then holds a request back until a slot is free (`closed-loop.ts`).
 */
import type { Rng } from '../kernel/rng.js';

/**
 * A Gamma(shape, 1) draw by Marsaglia and Tsang's method ("A simple method for generating
 * gamma variables", ACM TOMS 26(3), 2000); for shape < 1 via Gamma(shape + 1)·U^(1/shape).
 */
export function gammaDraw(rng: Rng, shape: number): number {
  if (!(shape > 0) || !Number.isFinite(shape)) throw new RangeError(`Expected shape > 0, got ${shape}`);
  if (shape < 1) return gammaDraw(rng, shape + 1) * (1 - rng.next()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = rng.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng.next();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/**
 * Due times (ms from the start) of `n` requests at `ratePerSec` requests/s (Infinity: all at
 * 0) with gamma-distributed gaps of shape `burstiness` (Infinity: evenly spaced).
 */
export function benchSendTimes(n: number, ratePerSec: number, burstiness: number, rng: Rng): number[] {
  if (ratePerSec === Number.POSITIVE_INFINITY) return new Array<number>(n).fill(0);
  if (!(ratePerSec > 0)) throw new RangeError(`Expected a request rate > 0, got ${ratePerSec}`);
  if (!(burstiness > 0)) throw new RangeError(`Expected burstiness > 0, got ${burstiness}`);
  const meanGapMs = 1000 / ratePerSec;
  const t: number[] = [];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum +=
      burstiness === Number.POSITIVE_INFINITY
        ? meanGapMs
        : (gammaDraw(rng, burstiness) / burstiness) * meanGapMs;
    t.push(sum);
  }
  const last = t[n - 1] ?? 0;
  if (last <= 0) return t;
  const scale = (n * meanGapMs) / last;
  return t.map((x) => Math.round(x * scale * 1000) / 1000);
}
