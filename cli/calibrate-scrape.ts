/**
 * A `vllm:*` Prometheus scrape as a calibration point (`sluice calibrate --scrape`).
 *
 * A point is one scrape of an engine's /metrics (counters since its start) or two, before and
 * after a steady load (the counters are differenced), with what the scrape cannot tell given
 * in the same `--scrape` spec: `interval=S`, the seconds between the two scrapes (or since
 * the start for one), and the load, `concurrency=N` (a closed loop of N clients) or, when
 * left out, an open loop of Poisson arrivals at the measured request rate (Δ requests / S).
 *
 * What is read (names as vLLM's `vllm/v1/metrics/loggers.py` exports them; a family absent
 * from the scrape is an error naming it):
 * - TTFT p50: `vllm:time_to_first_token_seconds`, by linear interpolation inside the bucket
 *   holding the median (as PromQL's `histogram_quantile`). Its error bound is the bucket: the
 *   true median is somewhere in [lower, upper], so the stated error is the larger distance
 *   from the estimate to either bound, relative to the estimate.
 * - TPOT p50: `vllm:inter_token_latency_seconds` (older: `vllm:time_per_output_token_seconds`)
 *   the same way when that error is at most 20%; otherwise (vLLM's first ITL bucket is
 *   0-10 ms, so a fast engine's median interpolates to 5 ms ± 100%) its exact mean, _sum /
 *   _count, taken as the median (steady decode has a narrow ITL spread), and said so.
 * - Output tokens/s: Δ `vllm:generation_tokens_total` / interval.
 * - Mean prompt and output lengths: `vllm:request_prompt_tokens` / `vllm:request_generation_tokens`
 *   _sum / _count, replayed uniform within ±25% like a result without its lengths.
 * - Requests: Δ `vllm:e2e_request_latency_seconds_count`.
 *
 * The text is parsed by the project's exposition parser (`proxy/prom-text.ts`), strictly:
 * a line that does not parse is an error naming the file and the line.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { type PromSample, parseSampleLine } from '../proxy/prom-text.js';
import { type BenchPoint, CalibrationInputError, spreadAround } from '../sim/engine/calibrate.js';

/** A p50 estimate from a histogram, with the bound of its error. */
export interface QuantileEstimate {
  /** The estimate, in the histogram's unit. */
  readonly value: number;
  /** The bucket holding it. */
  readonly lower: number;
  readonly upper: number;
  /** max(value − lower, upper − value) / value: the true quantile is within this of the estimate. */
  readonly relError: number;
}

/** Samples of a scrape, parsed strictly. */
export function parseScrape(text: string, label: string): PromSample[] {
  const out: PromSample[] = [];
  text.split('\n').forEach((raw, i) => {
    const t = raw.replace(/\r$/, '').trim();
    if (t === '' || t.startsWith('#')) return;
    const s = parseSampleLine(t);
    if (s === null) {
      throw new CalibrationInputError(
        `${label}:${i + 1}: not a Prometheus text-format sample line: ${JSON.stringify(t.slice(0, 80))}`,
      );
    }
    out.push(s);
  });
  if (out.length === 0) throw new CalibrationInputError(`${label}: no samples (not a /metrics scrape)`);
  return out;
}

/** Σ over label sets of the samples named `name` (an engine's series for all its models). */
function total(samples: readonly PromSample[], name: string): number | undefined {
  let sum: number | undefined;
  for (const s of samples) if (s.name === name) sum = (sum ?? 0) + s.value;
  return sum;
}

/** Cumulative bucket counts of histogram `family`, by upper bound (summed over label sets). */
function buckets(samples: readonly PromSample[], family: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${family}_bucket` || s.labels.le === undefined) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    m.set(le, (m.get(le) ?? 0) + s.value);
  }
  return m;
}

/**
 * The q-quantile of a histogram given by cumulative counts per upper bound, by linear
 * interpolation in its bucket (PromQL's `histogram_quantile`; the first bucket starts at 0).
 * @returns undefined when the histogram is empty; throws when the quantile is in +Inf
 */
export function histogramQuantile(
  cumulative: ReadonlyMap<number, number>,
  q: number,
  what: string,
): QuantileEstimate | undefined {
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  const count =
    cumulative.get(Number.POSITIVE_INFINITY) ?? cumulative.get(bounds[bounds.length - 1] as number);
  if (count === undefined || count <= 0) return undefined;
  let prev = 0;
  for (const b of bounds) {
    const c = cumulative.get(b) as number;
    if (c < prev) {
      throw new CalibrationInputError(
        `${what}: bucket le="${b}" counts ${c}, fewer than the bucket below it (${prev}); buckets are cumulative`,
      );
    }
    prev = c;
  }
  const rank = q * count;
  let lower = 0;
  let below = 0;
  for (const b of bounds) {
    const c = cumulative.get(b) as number;
    if (c >= rank) {
      if (b === Number.POSITIVE_INFINITY) {
        throw new CalibrationInputError(
          `${what}: the median is in the +Inf bucket (above le="${lower}"), no estimate`,
        );
      }
      const value = c === below ? b : lower + ((b - lower) * (rank - below)) / (c - below);
      return { value, lower, upper: b, relError: Math.max(value - lower, b - value) / value };
    }
    lower = b;
    below = c;
  }
  return undefined;
}

/** What the table prints about how a scrape point was read. */
export interface ScrapeNotes {
  readonly ttft: QuantileEstimate;
  /** The ITL p50 when it was used; undefined when the mean was. */
  readonly itl: QuantileEstimate | undefined;
  readonly itlMeanMs: number;
}

/** A parsed `--scrape` spec. */
export interface ScrapeSpec {
  readonly after: string;
  readonly before: string | undefined;
  readonly intervalS: number;
  readonly concurrency: number | undefined;
}

/** Parses `AFTER[,BEFORE],interval=S[,concurrency=N]` (files first, then key=value). */
export function parseScrapeSpec(spec: string): ScrapeSpec {
  const files: string[] = [];
  const kv = new Map<string, string>();
  for (const part of spec.split(',')) {
    const m = /^(interval|concurrency)=(.*)$/.exec(part);
    if (m) kv.set(m[1] as string, m[2] as string);
    else if (/^[a-z_]+=/.test(part)) {
      throw new CalibrationInputError(
        `--scrape ${spec}: unknown key ${JSON.stringify(part.split('=')[0])}; expected interval or concurrency`,
      );
    } else files.push(part);
  }
  if (files.length < 1 || files.length > 2 || files.some((f) => f === '')) {
    throw new CalibrationInputError(
      `--scrape ${spec}: expected one scrape file or two (after,before), got ${files.length}`,
    );
  }
  const interval = Number(kv.get('interval'));
  if (!(interval > 0) || !Number.isFinite(interval)) {
    throw new CalibrationInputError(
      `--scrape ${spec}: interval is ${JSON.stringify(kv.get('interval') ?? 'missing')}; expected the seconds between the scrapes (or since the engine started), a number > 0`,
    );
  }
  const c = kv.get('concurrency');
  const conc = c === undefined ? undefined : Number(c);
  if (conc !== undefined && !(Number.isInteger(conc) && conc >= 1)) {
    throw new CalibrationInputError(
      `--scrape ${spec}: concurrency is ${JSON.stringify(c)}; expected an integer >= 1`,
    );
  }
  return { after: files[0] as string, before: files[1], intervalS: interval, concurrency: conc };
}

const TTFT = 'vllm:time_to_first_token_seconds';
const ITL = ['vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds'] as const;
/** The largest relative error of an interpolated ITL median that is used as the TPOT p50. */
const ITL_P50_MAX_ERROR = 0.2;

/** One `--scrape` spec as a calibration point, with notes on how it was read. */
export function scrapePoint(spec: ScrapeSpec): { point: BenchPoint; notes: ScrapeNotes } {
  const label = basename(spec.after);
  const after = parseScrape(readFileSync(spec.after, 'utf8'), label);
  const before =
    spec.before === undefined ? [] : parseScrape(readFileSync(spec.before, 'utf8'), basename(spec.before));
  const delta = (name: string): number => {
    const a = total(after, name);
    if (a === undefined)
      throw new CalibrationInputError(`${label}: ${name} missing (a vLLM /metrics scrape has it)`);
    const d = a - (total(before, name) ?? 0);
    if (d < 0) {
      throw new CalibrationInputError(
        `${label}: ${name} is ${a}, below ${a - d} in ${spec.before}: the engine restarted between the scrapes, or they are swapped`,
      );
    }
    return d;
  };
  const deltaBuckets = (family: string): Map<number, number> => {
    const a = buckets(after, family);
    const b = buckets(before, family);
    return new Map([...a].map(([le, c]) => [le, c - (b.get(le) ?? 0)]));
  };
  const requests = delta('vllm:e2e_request_latency_seconds_count');
  if (requests < 1)
    throw new CalibrationInputError(
      `${label}: no request finished between the scrapes (vllm:e2e_request_latency_seconds_count)`,
    );
  const ttft = histogramQuantile(deltaBuckets(TTFT), 0.5, `${label}: ${TTFT}`);
  if (ttft === undefined) throw new CalibrationInputError(`${label}: ${TTFT}_bucket missing or empty`);
  const itlName = ITL.find((n) => total(after, `${n}_count`) !== undefined);
  if (itlName === undefined) throw new CalibrationInputError(`${label}: ${ITL[0]} (or ${ITL[1]}) missing`);
  const itlCount = delta(`${itlName}_count`);
  if (itlCount < 1)
    throw new CalibrationInputError(`${label}: ${itlName}_count did not grow: no decode between the scrapes`);
  const itlMeanMs = (delta(`${itlName}_sum`) / itlCount) * 1000;
  const itlP50 = histogramQuantile(deltaBuckets(itlName), 0.5, `${label}: ${itlName}`);
  const useP50 = itlP50 !== undefined && itlP50.relError <= ITL_P50_MAX_ERROR;
  const meanLen = (name: string): number => {
    const n = delta(`${name}_count`);
    if (n < 1) throw new CalibrationInputError(`${label}: ${name}_count did not grow`);
    return delta(`${name}_sum`) / n;
  };
  const promptMean = meanLen('vllm:request_prompt_tokens');
  const outMean = meanLen('vllm:request_generation_tokens');
  const n = Math.round(requests);
  const rate = requests / spec.intervalS;
  const point: BenchPoint = {
    label,
    concurrency: spec.concurrency ?? Number.POSITIVE_INFINITY,
    requestRate: spec.concurrency === undefined ? Math.round(rate * 1000) / 1000 : Number.POSITIVE_INFINITY,
    burstiness: 1,
    requests: n,
    promptTokens: spreadAround(promptMean, n, `${label}.in`),
    outputTokens: spreadAround(outMean, n, `${label}.out`),
    ttftP50Ms: Math.round(ttft.value * 1e6) / 1000,
    tpotP50Ms: Math.round((useP50 ? (itlP50 as QuantileEstimate).value * 1000 : itlMeanMs) * 1000) / 1000,
    outputTokensPerSec: Math.round((delta('vllm:generation_tokens_total') / spec.intervalS) * 10) / 10,
  };
  return { point, notes: { ttft, itl: useP50 ? itlP50 : undefined, itlMeanMs } };
}
