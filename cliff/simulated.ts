/**
 * `sluice cliff --simulate`: the cliff test in the simulator. Every step is the one the real
 * cliff runs (the scenario's requests at one rate, Poisson, for `stepS × timeScale` engine
 * seconds with the same share left out as warm-up), run through the same gate core on the
 * virtual clock against the scenario's simulated engines. It takes seconds instead of minutes
 * and is deterministic; beside a real cliff run with the same flags it shows where the two views
 * of the gate part.
 */

import { runScenario } from '../sim/run/run.js';
import { MemorySink } from '../sim/run/sinks.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import type { GateMode } from './bench.js';
import { type CliffResult, type CliffStep, cliffModes, stepOf, toPoint } from './cliff.js';
import { withArrival } from './scale-scenario.js';

/** Options of {@link runSimulatedCliff}: the real cliff's, less what only a real run has. */
export interface SimulatedCliffOptions {
  /** Offered loads, req/s of engine time, rising. */
  rates: number[];
  /** Lines to run, in order. @default off, observe, enforce (enforce only for the SMG dialect) */
  modes?: GateMode[];
  /** Seconds per step as the real cliff counts them (real seconds). @default 5 */
  stepS?: number;
  /** Engine ms per real ms of the matching real cliff: a step is `stepS × timeScale` engine seconds. @default 1 */
  timeScale?: number;
  /** Share of each step left out of the figures. @default 0.2 */
  warmupShare?: number;
  seed?: number;
  progress?: (line: string) => void;
}

/** The scenario with the loxilb rule's `fc_mode` set to `mode`. */
function withMode(s: Scenario, mode: GateMode): Scenario {
  if (s.gate.dialect !== 'loxilb') return s;
  const rule = s.gate.rule;
  return {
    ...s,
    gate: { ...s.gate, rule: { ...rule, serviceArguments: { ...rule.serviceArguments, fc_mode: mode } } },
  };
}

/** Runs the cliff test in the simulator. */
export async function runSimulatedCliff(scenario: Scenario, o: SimulatedCliffOptions): Promise<CliffResult> {
  const modes = cliffModes(scenario, o.modes);
  const stepS = o.stepS ?? 5;
  const ts = o.timeScale ?? 1;
  const warm = o.warmupShare ?? 0.2;
  const engineS = stepS * ts;
  const say = o.progress ?? (() => {});
  const steps: CliffStep[] = [];
  for (const mode of modes) {
    for (const rate of o.rates) {
      const sc = withMode(withArrival(scenario, rate, engineS, engineS * warm), mode);
      const summary = await runScenario(sc, {
        sink: new MemorySink(false),
        // TTFT as the real cliff's client measures it: a non-streamed answer's first token comes with the whole answer.
        clientTtft: true,
        ...(o.seed === undefined ? {} : { seed: o.seed }),
      });
      const s = stepOf(mode, rate, summary);
      // Defects only, as the real cliff reads them from /metrics (tenant_table_full is load, not a defect).
      s.anomalies = (summary.anomalies.underflow ?? 0) + (summary.anomalies.unknown_permit ?? 0);
      say(
        `${mode.padEnd(7)} ${String(rate).padStart(7)} req/s offered (simulated): goodput ${s.goodput_rps}, throughput ${s.throughput_rps}, shed ${(s.shed_rate * 100).toFixed(1)} %, TTFT p95 ${s.ttft_p95_ms ?? '-'} ms`,
      );
      steps.push(s);
    }
  }
  return {
    scenario: `${scenario.name} (simulated)`,
    steps,
    points: steps.map(toPoint),
    notes: [
      `simulated: each step is ${engineS} s of engine time on the virtual clock (as ${stepS} s real at time scale ${ts}), the first ${Math.round(warm * 100)} % not counted; Poisson arrivals; the scenario's simulated engines; TTFT as the client sees it (a non-streamed answer's first token comes with its last); each step starts empty (no drain), and requests still in the system at its end count as offered and not good`,
      'simulated: in flight after a step is not measured (reported as 0); anomalies are the run’s defect anomalies (underflow, unknown_permit), as in a real cliff',
    ],
  };
}
