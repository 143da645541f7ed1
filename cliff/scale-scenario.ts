/**
 * Scenario transforms for real runs, on the scenario's normal form (a fresh copy each time, never
 * the loaded, frozen one):
 *
 * - {@link shortenScenario}: a shorter run of the same scenario (`--duration-scale`): the run, its
 *   warm-up, arrival-process times, timeline times and trace start times x, rates kept. The
 *   simulator and the driver both run the shortened scenario, so they draw the same arrivals.
 * - {@link compressScenario}: the same scenario on a clock X times faster (`--time-scale`), for a
 *   real run against engines emulated at time scale X: every time / X, every rate * X, deadlines,
 *   SLOs, retry delays and the gate's time windows / X. Real figures are brought back to engine
 *   time with {@link toEngineTime}. What cannot be compressed is listed in `notes`.
 * - {@link withArrival}: the scenario with one arrival process at a given rate (a cliff step).
 */
import type { RunSummary } from '../sim/run/records.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import type { ArrivalSpec } from '../sim/scenario/schema.js';

type Clients = Scenario['clients'];
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A deep, mutable copy of a scenario. */
export function copyScenario(s: Scenario): Scenario {
  return structuredClone(s) as Scenario;
}

/** An arrival process with its times times `t` and its rates times `r`. */
export function scaleArrivalSpec(a: ArrivalSpec, t: number, r: number): ArrivalSpec {
  const o = { ...a } as Mutable<ArrivalSpec> & Record<string, unknown>;
  const times = ['start_ms', 'duration_ms', 'spike_at_ms', 'spike_duration_ms', 'period_ms', 'phase_ms'];
  const rates = [
    'rate_per_sec',
    'from_rate_per_sec',
    'to_rate_per_sec',
    'base_rate_per_sec',
    'spike_rate_per_sec',
    'mean_rate_per_sec',
    'amplitude_per_sec',
  ];
  for (const k of times) if (typeof o[k] === 'number') o[k] = (o[k] as number) * t;
  for (const k of rates) if (typeof o[k] === 'number') o[k] = (o[k] as number) * r;
  if (o.kind === 'step') {
    o.steps = o.steps.map((s) => ({ duration_ms: s.duration_ms * t, rate_per_sec: s.rate_per_sec * r }));
  }
  if (o.kind === 'trace') {
    // Inline trace times are recorded times; compression goes through speedup.
    o.speedup = (o.speedup ?? 1) / t;
  }
  return o as ArrivalSpec;
}

/** Applies `fn` to every arrival process of the clients and of the timeline's workload shifts. */
function eachArrival(s: Scenario, fn: (a: ArrivalSpec) => ArrivalSpec): void {
  const c = s.clients as Mutable<Clients>;
  if (c.arrival) c.arrival = fn(c.arrival);
  if (c.tenants) c.tenants = c.tenants.map((t) => (t.arrival ? { ...t, arrival: fn(t.arrival) } : t));
  s.timeline = s.timeline.map((e) =>
    e.event === 'workload_shift' && e.arrival ? { ...e, arrival: fn(e.arrival) } : e,
  ) as Scenario['timeline'];
}

/** Multiplies every timeline time (`at_s` and second-valued fields) by `t`. */
function scaleTimeline(s: Scenario, t: number): void {
  s.timeline = s.timeline.map((e) => {
    const o = { ...e } as Record<string, unknown>;
    for (const k of ['at_s', 'duration_s', 'down_s', 'up_s', 'every_s']) {
      if (typeof o[k] === 'number') o[k] = (o[k] as number) * t;
    }
    return o;
  }) as Scenario['timeline'];
}

/**
 * The scenario over `x` times its length (0 < x): duration, warm-up, arrival-process times, timeline
 * and trace start times * x; rates, deadlines, SLOs and token counts kept (as `--duration-scale`).
 */
export function shortenScenario(scenario: Scenario, x: number): Scenario {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeError(`duration scale: ${x} is not a positive number`);
  const s = copyScenario(scenario);
  if (x === 1) return s;
  s.duration_s *= x;
  s.warmup_s *= x;
  eachArrival(s, (a) => scaleArrivalSpec(a, x, 1));
  scaleTimeline(s, x);
  const c = s.clients as Mutable<Clients>;
  if (c.trace) c.trace = { ...c.trace, start_ms: c.trace.start_ms * x };
  if (c.closed_loop) {
    const cl = { ...c.closed_loop };
    if (cl.start_ms !== undefined) cl.start_ms *= x;
    if (cl.ramp_up_ms !== undefined) cl.ramp_up_ms *= x;
    if (cl.stop_at_ms !== undefined) cl.stop_at_ms *= x;
    c.closed_loop = cl;
  }
  return s;
}

/** Gate fields that are time windows (integer ms), compressed with the clock. */
const GATE_WINDOWS_MS = [
  'fc_max_queue_wait_ms',
  'fc_ttft_target_ms',
  'fc_telemetry_stale_ms',
  'fc_warmup_ms',
];

/** A compressed scenario and what compression could not carry over. */
export interface Compressed {
  scenario: Scenario;
  /** Engine ms per real ms. */
  timeScale: number;
  notes: string[];
}

/** The slowest time scale a real run takes (engine ms per real ms). */
export const MIN_TIME_SCALE = 0.05;

/** Divides a positive ms value by `x`, keeping it a whole, positive ms. */
const msDiv = (v: number, x: number): number => Math.max(1, Math.round(v / x));

/**
 * The scenario on a clock `x` times faster, for a real run against engines emulated at time scale
 * `x`. The simulator runs the uncompressed scenario; multiply the real run's times by x and
 * divide its rates by x ({@link toEngineTime}) to compare. An `x` below 1 is slow motion: the
 * real run takes 1/x times as long, at 1/x of the event rate, and the harness's own overhead
 * (loopback hops, the proxy, timer granularity) counts only x times in engine time, which is
 * what a harness that cannot keep up with a scenario's token stream needs.
 */
export function compressScenario(
  scenario: Scenario,
  x: number,
  opts: { gateOnEngineClock?: boolean } = {},
): Compressed {
  if (!(x >= MIN_TIME_SCALE) || !Number.isFinite(x))
    throw new RangeError(`time scale: ${x} is not a number >= ${MIN_TIME_SCALE}`);
  const s = copyScenario(scenario);
  const notes: string[] = [];
  if (x === 1) return { scenario: s, timeScale: 1, notes };
  s.duration_s /= x;
  s.warmup_s /= x;
  eachArrival(s, (a) => scaleArrivalSpec(a, 1 / x, x));
  scaleTimeline(s, 1 / x);
  const c = s.clients as Mutable<Clients> & Record<string, unknown>;
  const shape = (o: Record<string, unknown>): void => {
    for (const k of ['deadline_ms', 'ttft_slo_ms']) if (typeof o[k] === 'number') o[k] = (o[k] as number) / x;
  };
  shape(c);
  if (c.tenants) {
    c.tenants = c.tenants.map((t) => {
      const o = { ...t } as Record<string, unknown>;
      shape(o);
      return o as (typeof c.tenants & object)[number];
    });
  }
  if (c.trace) c.trace = { ...c.trace, start_ms: c.trace.start_ms / x, speedup: c.trace.speedup * x };
  const r = { ...c.retry } as Record<string, unknown>;
  // A gate on the engines' clock answers in engine time, and the driver then waits retries
  // in engine time as well (`engineTimeScale`): the gate's windows and the retry delays stay.
  switch (opts.gateOnEngineClock ? 'engine-clock' : c.retry.kind) {
    case 'engine-clock':
      break;
    case 'honour':
      r.fallback_delay_ms = ((r.fallback_delay_ms as number | undefined) ?? 1000) / x;
      notes.push(
        `retries wait the gate's Retry-After (whole seconds, at least 1 s real = ${x} s engine time): retries come ${x > 1 ? 'later' : 'earlier'} than in the simulation`,
      );
      break;
    case 'sdk':
      r.initial_delay_ms = ((r.initial_delay_ms as number | undefined) ?? 500) / x;
      r.max_delay_ms = ((r.max_delay_ms as number | undefined) ?? 8000) / x;
      notes.push(
        `SDK retries sleep the gate's Retry-After as given (whole seconds, not compressed): retries after a refusal come at ${x} times their simulated delay`,
      );
      break;
    case 'synchronised':
      r.delay_ms = ((r.delay_ms as number | undefined) ?? 1000) / x;
      break;
    default:
      break;
  }
  c.retry = r as Clients['retry'];
  if (c.closed_loop) notes.push('closed-loop think times are not compressed (the driver does not send them)');
  if (opts.gateOnEngineClock) {
    notes.push(
      "the gate runs on the engines' clock: its time windows, Retry-After and the retry delays are engine time",
    );
  } else if (s.gate.dialect === 'loxilb') {
    const args = { ...s.gate.rule.serviceArguments };
    for (const k of GATE_WINDOWS_MS)
      if (typeof args[k] === 'number' && (args[k] as number) > 0) args[k] = msDiv(args[k] as number, x);
    s.gate = { ...s.gate, rule: { ...s.gate.rule, serviceArguments: args } };
    if (args.fc_adaptive === 'on' || args.fc_adaptive === true)
      notes.push("the adaptive ceiling's scrape and evaluation periods are real time, not compressed");
  } else {
    notes.push('SMG queue timeouts are whole seconds: not compressed');
  }
  notes.push(
    `network and proxy overhead (real ms) counts ${x} times over in engine time; engine steps are real timers, so event-loop lag is magnified ${x} times too`,
  );
  return { scenario: s, timeScale: x, notes };
}

/** A percentile block with its times multiplied by `x`. */
function scalePct<P extends RunSummary['ttft_ms']>(p: P, x: number): P {
  const m = (v: number) => Math.round(v * x * 1000) / 1000;
  return { ...p, p50: m(p.p50), p95: m(p.p95), p99: m(p.p99), max: m(p.max), mean: m(p.mean) };
}

/** A real run's summary on a clock `x` times faster, in engine time (times * x, rates / x). */
export function toEngineTime(s: RunSummary, x: number): RunSummary {
  if (x === 1) return s;
  const r = (v: number) => Math.round((v / x) * 1000) / 1000;
  const t = (v: number) => Math.round(v * x * 1000) / 1000;
  return {
    ...s,
    duration_s: t(s.duration_s),
    warmup_s: t(s.warmup_s),
    measured_s: t(s.measured_s),
    goodput_rps: r(s.goodput_rps),
    throughput_rps: r(s.throughput_rps),
    ttft_ms: scalePct(s.ttft_ms, x),
    e2e_ms: scalePct(s.e2e_ms, x),
    queue_wait_ms: scalePct(s.queue_wait_ms, x),
    tenants: s.tenants.map((tn) => ({ ...tn, goodput_rps: r(tn.goodput_rps) })),
  };
}

/**
 * The scenario with one arrival process: `kind` at `ratePerSec` over `durationS` (warm-up
 * `warmupS`), no timeline. Tenants with their own arrivals keep their shares of the total rate;
 * tenants sharing the workload's arrivals keep their weights.
 */
export function withArrival(
  scenario: Scenario,
  ratePerSec: number,
  durationS: number,
  warmupS: number,
  kind: 'poisson' | 'constant' = 'poisson',
): Scenario {
  const s = copyScenario(scenario);
  s.duration_s = durationS;
  s.warmup_s = warmupS;
  s.timeline = [];
  const c = s.clients as Mutable<Clients>;
  delete c.trace;
  delete c.closed_loop;
  const own = c.tenants?.filter((t) => t.arrival !== undefined) ?? [];
  if (c.tenants && own.length === c.tenants.length && own.length > 0) {
    const rates = c.tenants.map((t) => meanRate(t.arrival as ArrivalSpec, durationS * 1000));
    const total = rates.reduce((a, b) => a + b, 0);
    c.tenants = c.tenants.map((t, i) => ({
      ...t,
      arrival: { kind, rate_per_sec: total > 0 ? (ratePerSec * (rates[i] ?? 0)) / total : 0 },
    })) as Clients['tenants'];
    delete c.arrival;
  } else {
    c.arrival = { kind, rate_per_sec: ratePerSec } as ArrivalSpec;
  }
  return s;
}

/** The mean rate of an arrival process over its length (or `spanMs` when open-ended), req/s. */
export function meanRate(a: ArrivalSpec, spanMs: number): number {
  switch (a.kind) {
    case 'constant':
    case 'poisson':
      return a.rate_per_sec;
    case 'ramp':
      return (a.from_rate_per_sec + a.to_rate_per_sec) / 2;
    case 'step': {
      const total = a.steps.reduce((n, s) => n + s.duration_ms, 0);
      return total > 0 ? a.steps.reduce((n, s) => n + s.rate_per_sec * s.duration_ms, 0) / total : 0;
    }
    case 'spike':
      return a.base_rate_per_sec;
    case 'diurnal':
      return a.mean_rate_per_sec;
    case 'trace':
      return spanMs > 0 ? (a.at_ms.length * 1000) / spanMs : 0;
  }
}

/** The scenario's mean offered rate (req/s) over its run, from its arrival processes. */
export function scenarioRate(s: Scenario): number {
  const span = s.duration_s * 1000;
  const c = s.clients;
  let r = c.arrival ? meanRate(c.arrival, span) : 0;
  for (const t of c.tenants ?? []) if (t.arrival) r += meanRate(t.arrival, span);
  return r;
}
