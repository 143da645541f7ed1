/**
 * One simulator run of a sweep or check: a scenario with a point's values
 * set, at one seed, reduced to its figures. The same function runs in a
 * worker thread or in process.
 */
import { runScenario } from '../sim/run/run.js';
import { MemorySink } from '../sim/run/sinks.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import { pointScenario } from './apply.js';
import type { Params } from './grid.js';
import { type Figures, figuresOf } from './metrics.js';

/** A run to do: which scenario (index into the pool's list), the point's values and the seed. */
export interface RunTask {
  id: number;
  scenario: number;
  params: Params;
  seed: number;
}

/** Runs one task and returns its figures. */
export async function runTask(scenario: Scenario, params: Params, seed: number): Promise<Figures> {
  const summary = await runScenario(pointScenario(scenario, params), { seed, sink: new MemorySink(false) });
  return figuresOf(summary);
}
