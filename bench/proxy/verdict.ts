/**
 * The verdicts of bench:proxy's targets. A target is judged only when the measurement can resolve
 * it; otherwise it is `unresolved`, with why:
 *
 * - added TTFT p99 <= 2 ms: unresolved when the overhead comes out negative (a proxy cannot make
 *   requests faster than no proxy: the difference is noise), when the direct baseline's p99
 *   moves between repetitions by more than the target, or when the harness (engine and load
 *   generator, which share one CPU) was saturated, so latency measured the harness, or other
 *   workloads on the machine used {@link FOREIGN_BUSY_CORES} cores or more.
 * - efficiency: the proxy's CPU µs per request <= 2 x HAProxy's (the old "requests/s >= 0.5 x
 *   HAProxy" in the terms that survive an engine-bound run). Unresolved without HAProxy or a CPU
 *   reading, or when the proxy's figure moves between repetitions by more than its distance to
 *   the bound. The bare Node relay's figure is the floor of a proxy on Node's http stack.
 * - requests/s >= 0.5 x HAProxy: reported, and unresolved whenever either relay used less than
 *   {@link SUT_BOTTLENECK_CORES} of its CPU: then the engine or the generator bounds requests/s,
 *   and the ratio is met whatever the proxy costs.
 *
 * Pure: no I/O, no clock. bench/proxy.bench.ts feeds it the repetitions' samples.
 */

/** met / missed, or unresolved when the measurement cannot tell. */
export type Verdict = 'met' | 'missed' | 'unresolved';

/** One target's verdict. */
export interface Judged {
  verdict: Verdict;
  /** The measured figure (null when it could not be computed). */
  value: number | null;
  /** The target in words, e.g. "added TTFT p99 <= 2 ms". */
  target: string;
  /** Why it is unresolved (empty otherwise). */
  why: string[];
}

/** The targets (issue 5 §8, the requests/s one restated as CPU per request). */
export const BENCH_TARGETS = {
  addedP99Ms: 2,
  rpsVsHaproxy: 0.5,
  /** The proxy may spend at most this many times HAProxy's CPU per request. */
  cpuVsHaproxy: 2,
  bytesPerParked: 64 * 1024,
} as const;

/** The harness (engine + load generator) shares one CPU; from this many cores it is saturated. */
export const HARNESS_SATURATED_CORES = 0.9;
/** Other workloads on the machine using this many cores or more during a latency run make it unresolved. */
export const FOREIGN_BUSY_CORES = 0.5;
/** A relay using less of its CPU than this is not the bottleneck of a requests/s run. */
export const SUT_BOTTLENECK_CORES = 0.8;

const r2 = (x: number): number => Math.round(x * 100) / 100;
const finite = (xs: readonly number[]): number[] => xs.filter((x) => Number.isFinite(x));

/** The median of the finite values (NaN when none). */
export function medianOf(xs: readonly number[]): number {
  const s = finite(xs).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** max - min of the finite values (0 for fewer than two). */
export function spreadOf(xs: readonly number[]): number {
  const s = finite(xs);
  return s.length < 2 ? 0 : Math.max(...s) - Math.min(...s);
}

const judged = (value: number | null, target: string, why: string[], met: boolean): Judged => ({
  verdict: why.length > 0 ? 'unresolved' : met ? 'met' : 'missed',
  value,
  target,
  why,
});

/** The latency samples of one target: per repetition, TTFT p99 and the harness's cores. */
export interface LatencySamples {
  ttftP99: readonly number[];
  /** Engine + load generator cores during each repetition. */
  harnessCores: readonly number[];
  /** Cores other workloads on the machine used during each repetition (absent: not measured). */
  foreignCores?: readonly number[];
}

/** Added TTFT p99 (median proxy p99 - median direct p99) <= `targetMs`. */
export function judgeAddedP99(
  direct: LatencySamples,
  proxy: LatencySamples,
  targetMs: number = BENCH_TARGETS.addedP99Ms,
): Judged {
  const target = `added TTFT p99 <= ${targetMs} ms`;
  const d = medianOf(direct.ttftP99);
  const p = medianOf(proxy.ttftP99);
  if (!Number.isFinite(d) || !Number.isFinite(p)) return judged(null, target, ['no latency samples'], false);
  const added = r2(p - d);
  const why: string[] = [];
  if (added < 0)
    why.push(
      `negative overhead (${added} ms): a proxy cannot be faster than no proxy, so the difference is noise`,
    );
  const spread = r2(spreadOf(direct.ttftP99));
  if (spread > targetMs)
    why.push(
      `the direct baseline's p99 moves by ${spread} ms between repetitions, more than the ${targetMs} ms target`,
    );
  const harness = r2(Math.max(0, ...finite([...direct.harnessCores, ...proxy.harnessCores])));
  if (harness >= HARNESS_SATURATED_CORES)
    why.push(
      `the harness was saturated (engine + load generator used ${harness} cores of their one CPU, from ${HARNESS_SATURATED_CORES} it is saturated): latency measured the harness`,
    );
  const foreign = r2(Math.max(0, ...finite([...(direct.foreignCores ?? []), ...(proxy.foreignCores ?? [])])));
  if (foreign >= FOREIGN_BUSY_CORES)
    why.push(
      `other workloads on the machine used up to ${foreign} cores during a repetition (from ${FOREIGN_BUSY_CORES} the machine is too busy): latency measured the contention`,
    );
  return judged(added, target, why, added <= targetMs);
}

/** A relay's requests/s samples: per repetition, CPU µs per request, cores used, requests/s. */
export interface RelaySamples {
  cpuUsPerReq: readonly number[];
  sutCores: readonly number[];
  rps: readonly number[];
}

/** The proxy's CPU µs per request <= `maxRatio` x HAProxy's. */
export function judgeCpuPerRequest(
  proxy: RelaySamples,
  haproxy: RelaySamples | null,
  maxRatio: number = BENCH_TARGETS.cpuVsHaproxy,
): Judged {
  const target = `proxy CPU per request <= ${maxRatio} x HAProxy's`;
  if (haproxy === null) return judged(null, target, ['HAProxy is not installed'], false);
  const p = medianOf(proxy.cpuUsPerReq);
  const h = medianOf(haproxy.cpuUsPerReq);
  if (!Number.isFinite(p) || !Number.isFinite(h) || h <= 0)
    return judged(null, target, ['no CPU reading of the proxy or HAProxy (needs /proc)'], false);
  const ratio = r2(p / h);
  const bound = maxRatio * h;
  const spread = r2(spreadOf(proxy.cpuUsPerReq));
  const why: string[] = [];
  if (spread > Math.abs(bound - p))
    why.push(
      `the proxy's CPU per request moves by ${spread} µs between repetitions, more than its distance to the bound (${r2(Math.abs(bound - p))} µs)`,
    );
  return judged(ratio, target, why, p <= bound);
}

/** Proxy requests/s >= `minRatio` x HAProxy's, judged only when both relays were the bottleneck. */
export function judgeRpsRatio(
  proxy: RelaySamples,
  haproxy: RelaySamples | null,
  minRatio: number = BENCH_TARGETS.rpsVsHaproxy,
): Judged {
  const target = `proxy requests/s >= ${minRatio} x HAProxy's`;
  if (haproxy === null) return judged(null, target, ['HAProxy is not installed'], false);
  const p = medianOf(proxy.rps);
  const h = medianOf(haproxy.rps);
  if (!Number.isFinite(p) || !Number.isFinite(h) || h <= 0)
    return judged(null, target, ['no requests/s reading'], false);
  const ratio = r2(p / h);
  const why: string[] = [];
  for (const [name, s] of [
    ['the proxy', proxy],
    ['HAProxy', haproxy],
  ] as const) {
    const cores = medianOf(s.sutCores);
    if (!Number.isFinite(cores) || cores < SUT_BOTTLENECK_CORES)
      why.push(
        `${name} used ${Number.isFinite(cores) ? r2(cores) : 'an unknown share of'} cores of its CPU (below ${SUT_BOTTLENECK_CORES}): it is not the bottleneck, so requests/s is bound by the engine or the generator`,
      );
  }
  return judged(ratio, target, why, ratio >= minRatio);
}

/** Bytes per parked request <= the target (resolved whenever measured). */
export function judgeParked(bytes: number | null, max: number = BENCH_TARGETS.bytesPerParked): Judged {
  const target = `memory per parked request <= ${max} B`;
  if (bytes === null) return judged(null, target, ['not measured'], false);
  return judged(bytes, target, [], bytes <= max);
}

/** "met", "MISSED", or "unresolved (why; why)". */
export function verdictText(j: Judged): string {
  if (j.verdict === 'unresolved') return `unresolved (${j.why.join('; ')})`;
  return j.verdict === 'met' ? 'met' : 'MISSED';
}
