/**
 * `sluice cliff`: steps offered load through and past saturation against the real gate (the proxy
 * in front of emulated engines on loopback, or a given target) with the gate off, in observe and
 * in enforce, and optionally against HAProxy 2.6 in front of the same engines. Each step is an
 * open-loop run of the scenario's requests at one rate (Poisson), measured after a warm-up; shed
 * requests stay in the offered-load denominator (goodput counts good completions of every
 * offered request). Rates and times are in engine time: with time scale X, a step of S real
 * seconds is X*S engine seconds, offered at X times the rate.
 *
 * One proxy serves every mode: the mode is switched by a replace POST of the rule through the
 * management API (fc_mode only, so applied in place). Steps within a mode run in rising order,
 * each after the previous one has drained (nothing in flight or queued on the gate and engines).
 */

import { runLoad } from '../loadgen/driver/driver.js';
import { lateness, type ScheduleReport } from '../loadgen/driver/lag.js';
import { prepareLoad } from '../loadgen/driver/scenario.js';
import type { CliffMode, CliffPoint } from '../reports/types.js';
import type { RunSummary } from '../sim/run/records.js';
import { MemorySink } from '../sim/run/sinks.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import { freePort, type GateMode, type RealGate, startRealGate } from './bench.js';
import { engineSpecs, type LiveEngine, startEngines } from './engines.js';
import { UnsupportedScenarioError } from './errors.js';
import { haproxyConfig } from './haproxy.js';
import { findHaproxy, startHaproxy } from './haproxy-process.js';
import { compressScenario, toEngineTime, withArrival } from './scale-scenario.js';
import { invalidStepNotes } from './validity.js';

/** A line of the cliff: a gate mode, or HAProxy. */
export type CliffLine = CliffMode;

/** One measured step, with what the report's point leaves out. */
export interface CliffStep extends CliffPoint {
  line: CliffLine;
  /** Good / offered logical requests. */
  goodput_share: number;
  offered: number;
  attempts: number;
  ttft_p50_ms: number | null;
  sheds: Record<string, number>;
  /** Attempts the driver sent in the step (0 in the simulator). */
  sends: number;
  /** Sends later than 10 ms behind their schedule, and the driver's lag (ms). */
  late_sends: number;
  lag_p99_ms: number;
  lag_max_ms: number;
  /** late_sends / sends, and the bound it was held to. */
  late_share: number;
  max_late_share: number;
  /** False when the driver fell behind (more late sends than the lateness bound allows): the
   * step is marked invalid and left out of the report's chart, findings and table. */
  valid: boolean;
  transport_errors: number;
  /** Gate in-flight and queued after the step drained (enforce/observe), and defect anomalies. */
  inflight_after: number;
  anomalies: number;
}

/** Options of {@link runCliff}. */
export interface CliffOptions {
  /** Offered loads, req/s of engine time, rising. */
  rates: number[];
  /** Lines to run, in order. @default off, observe, enforce */
  modes?: GateMode[];
  /** Engines to start (default: the scenario's). */
  engines?: number;
  profile?: string;
  /** Real seconds per step. @default 5 */
  stepS?: number;
  /** Share of each step left out of the figures. @default 0.2 */
  warmupShare?: number;
  /** Engine ms per real ms. @default 1 */
  timeScale?: number;
  /** A running target instead of the local proxy and engines (one line, its mode unknown here). */
  target?: string;
  /** Add the HAProxy 2.6 line. */
  haproxy?: boolean;
  seed?: number;
  progress?: (line: string) => void;
  /** The lateness bound of a step (share of late sends). @default MAX_LATE_SHARE */
  maxLateShare?: number;
  /** Called after each step with the steps done and the steps planned. */
  onStep?: (done: number, total: number) => void;
}

/** What a cliff test returns. */
export interface CliffResult {
  scenario: string;
  steps: CliffStep[];
  /** The report's points, one per valid step (HAProxy's included): invalid steps are left out. */
  points: CliffPoint[];
  notes: string[];
  /** HAProxy's version and generated configuration, when its line ran. */
  haproxy?: { version: string; config: string };
  /** Why the HAProxy line was skipped. */
  haproxySkipped?: string;
}

/**
 * A step's figures from its summary (engine time), and how well the driver kept the step's
 * schedule (none in the simulator: always valid).
 */
export function stepOf(
  line: CliffLine,
  rate: number,
  s: RunSummary,
  schedule?: ScheduleReport,
  maxLateShare?: number,
): CliffStep {
  const late = lateness(schedule ?? { sends: 0, late_sends: 0, lag_p99_ms: 0 }, maxLateShare);
  return {
    mode: line,
    line,
    offered_rps: rate,
    goodput_rps: s.goodput_rps,
    throughput_rps: s.throughput_rps,
    shed_rate: s.shed_rate,
    ttft_p95_ms: s.ttft_ms.count === 0 ? null : s.ttft_ms.p95,
    ttft_p50_ms: s.ttft_ms.count === 0 ? null : s.ttft_ms.p50,
    goodput_share: s.goodput_share,
    offered: s.offered,
    attempts: s.attempts,
    sheds: s.sheds,
    sends: late.sends,
    late_sends: late.late_sends,
    lag_p99_ms: late.lag_p99_ms,
    lag_max_ms: schedule?.lag_max_ms ?? 0,
    late_share: late.late_share,
    max_late_share: late.max_late_share,
    valid: late.valid,
    transport_errors: s.anomalies.transport_errors ?? 0,
    inflight_after: 0,
    anomalies: 0,
  };
}

/**
 * The lines a cliff of `scenario` runs: `modes`, by default off, observe and enforce; an
 * SMG-dialect scenario has no modes, so its one line is enforce.
 * @throws UnsupportedScenarioError for another mode asked of an SMG-dialect scenario
 */
export function cliffModes(scenario: Scenario, modes?: readonly GateMode[]): GateMode[] {
  const smg = scenario.gate.dialect !== 'loxilb';
  const out = [...(modes ?? (smg ? ['enforce'] : ['off', 'observe', 'enforce']))] as GateMode[];
  if (smg && out.some((m) => m !== 'enforce')) {
    throw new UnsupportedScenarioError(
      `--modes: ${out.join(',')} asks for a mode other than enforce, and the SMG dialect has no gate modes`,
    );
  }
  return out;
}

/** Waits until the engines hold nothing (or `timeoutMs` passes). */
async function enginesIdle(engines: readonly LiveEngine[], timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs;
  const busy = () => engines.some((e) => e.load().running + e.load().waiting > 0);
  while (busy() && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/** Runs the cliff test. */
export async function runCliff(scenario: Scenario, o: CliffOptions): Promise<CliffResult> {
  const modes = cliffModes(scenario, o.modes);
  const smg = scenario.gate.dialect !== 'loxilb';
  const ts = o.timeScale ?? 1;
  const stepS = o.stepS ?? 5;
  const warm = o.warmupShare ?? 0.2;
  const seed = o.seed ?? scenario.seed;
  const say = o.progress ?? (() => {});
  const notes: string[] = [];
  const steps: CliffStep[] = [];
  const engineS = stepS * ts;
  const planned =
    o.target !== undefined ? o.rates.length : (modes.length + (o.haproxy ? 1 : 0)) * o.rates.length;
  let stepsDone = 0;

  /** One step against `target`: the scenario at `rate`, compressed onto the real clock. */
  const step = async (line: CliffLine, rate: number, target: string): Promise<CliffStep> => {
    const sc = withArrival(scenario, rate, engineS, engineS * warm);
    const comp = compressScenario(sc, ts);
    const prepared = await prepareLoad(comp.scenario, { seed });
    const r = await runLoad({ ...prepared, target, sink: new MemorySink(false) });
    const s = stepOf(line, rate, toEngineTime(r.summary, ts), r.schedule, o.maxLateShare);
    say(
      `${s.valid ? '' : 'INVALID (driver fell behind) '}${line.padEnd(7)} ${String(rate).padStart(7)} req/s offered: ${s.late_sends} of ${s.sends} sends late (lag p99 ${s.lag_p99_ms} ms), goodput ${s.goodput_rps}, throughput ${s.throughput_rps}, shed ${(s.shed_rate * 100).toFixed(1)} %, TTFT p95 ${s.ttft_p95_ms ?? '-'} ms${
        Object.keys(s.sheds).length
          ? ` (${Object.entries(s.sheds)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ')})`
          : ''
      }`,
    );
    o.onStep?.(++stepsDone, planned);
    return s;
  };

  if (o.target !== undefined) {
    const mode =
      scenario.gate.dialect === 'loxilb'
        ? String(scenario.gate.rule.serviceArguments.fc_mode ?? 'enforce')
        : 'enforce';
    const line: CliffMode = mode === 'off' || mode === 'observe' ? mode : 'enforce';
    notes.push(
      `target ${o.target}: one line, labelled ${line} from the scenario's fc_mode; the command cannot switch the mode of a gate it did not start`,
    );
    for (const rate of o.rates) steps.push(await step(line, rate, o.target));
    return finish({ scenario: scenario.name, steps, points: [], notes });
  }

  const { specs, notes: engineNotes } = engineSpecs(scenario, {
    ...(o.engines === undefined ? {} : { count: o.engines }),
    ...(o.profile === undefined ? {} : { profile: o.profile }),
  });
  notes.push(...engineNotes, ...compressScenario(scenario, ts).notes);
  const engines = await startEngines(specs, { timeScale: ts, seed });
  let result: CliffResult | undefined;
  try {
    // The gate's time windows are compressed with the rest of the scenario.
    const compressed = compressScenario(scenario, ts).scenario;
    let gate: RealGate | undefined;
    try {
      gate = await startRealGate(compressed, engines, smg ? {} : { mode: modes[0] ?? 'enforce' });
      for (const mode of modes) {
        const outcome = smg ? 'the SMG dialect, always enforcing' : await gate.setMode(mode);
        say(`mode ${mode} (${outcome || 'applied'})`);
        for (const rate of o.rates) {
          const s = await step(mode, rate, gate.target);
          const after = await gate.waitIdle(10_000);
          await enginesIdle(engines, 10_000);
          s.inflight_after = after.inflight;
          s.anomalies = after.anomalies;
          steps.push(s);
        }
      }
      notes.push(...gate.warnings);
    } finally {
      await gate?.close();
    }
    result = { scenario: scenario.name, steps, points: [], notes };
    if (o.haproxy) await haproxyLine(compressed, engines, result, step);
  } finally {
    await Promise.all(engines.map((e) => e.close()));
  }
  notes.push(
    `each step: ${engineS} s of engine time (${stepS} s real at time scale ${ts}), the first ${Math.round(warm * 100)} % not counted; Poisson arrivals; rising rates, each after the previous drained`,
  );
  return finish(result);
}

/** Sets the report's points from the valid steps and names every invalid step in the notes. */
export function finish(result: CliffResult): CliffResult {
  result.points = result.steps.filter((s) => s.valid).map(toPoint);
  result.notes.push(...invalidStepNotes(result.steps));
  return result;
}

/** The report's point of a step. */
export function toPoint(s: CliffStep): CliffPoint {
  return {
    mode: s.mode,
    offered_rps: s.offered_rps,
    goodput_rps: s.goodput_rps,
    throughput_rps: s.throughput_rps,
    shed_rate: s.shed_rate,
    ttft_p95_ms: s.ttft_p95_ms,
  };
}

/** Runs the HAProxy line into `result`, or records why it was skipped. */
async function haproxyLine(
  compressed: Scenario,
  engines: readonly LiveEngine[],
  result: CliffResult,
  step: (line: CliffLine, rate: number, target: string) => Promise<CliffStep>,
): Promise<void> {
  const found = findHaproxy();
  if (!found.ok) {
    result.haproxySkipped = found.why;
    result.notes.push(found.why);
    return;
  }
  if (compressed.gate.dialect !== 'loxilb') return;
  const a = compressed.gate.rule.serviceArguments;
  const n = engines.length;
  const ep = Number(a.fc_ep_max_inflight ?? 0);
  const svc = Number(a.fc_max_outstanding ?? 0);
  const maxconn =
    ep > 0
      ? svc > 0
        ? Math.min(ep, Math.floor(svc / n))
        : ep
      : svc > 0
        ? Math.max(1, Math.floor(svc / n))
        : 0;
  const depth = Number(a.fc_max_queue_depth ?? 0);
  const wait = Number(a.fc_max_queue_wait_ms ?? 0) || (depth > 0 ? 5000 : 1);
  const port = await freePort();
  const hp = await startHaproxy(
    found.path,
    haproxyConfig({
      servers: engines.map((e) => e.port),
      maxconnPerServer: maxconn,
      queueDepth: depth,
      queueWaitMs: wait,
      port,
    }),
    port,
  );
  result.haproxy = { version: found.version, config: hp.config };
  result.notes.push(
    `HAProxy line: ${found.version}; maxconn ${maxconn || 'unlimited'} per server, 429 at queue ${depth || 1}, timeout queue ${wait} ms (real), leastconn, http-no-delay; no tenant share, no adaptive ceiling`,
  );
  try {
    for (const rate of result.steps.filter((s) => s.line !== 'haproxy').map((s) => s.offered_rps)) {
      if (result.steps.some((s) => s.line === 'haproxy' && s.offered_rps === rate)) continue;
      const s = await step('haproxy', rate, hp.target);
      await enginesIdle(engines, 10_000);
      result.steps.push(s);
    }
  } finally {
    await hp.close();
  }
}
