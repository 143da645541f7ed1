/**
 * Engines that plan uneventful steps ahead give exactly the outputs of stepping one event
 * at a time: the same records, per-second rows and summary (event count included), over
 * scenarios that exercise what can cut a planned run short (arrivals, finishes, client
 * cancellations, preemption under long contexts, slowdowns, engines going down and coming
 * back cold, P/D legs, same-instant ties).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Simulator } from '../kernel/simulator.js';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const SCENARIOS = [
  'default.yaml',
  'spike.yaml',
  'cancellations.yaml',
  'long-context-shift.yaml',
  'provider-slowdown.yaml',
  'half-capacity-loss.yaml',
  'flapping-endpoints-warmup.yaml',
  'pd-pool.yaml',
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('running engine steps ahead', () => {
  it.each(SCENARIOS)('%s: the same outputs as one event per step', async (file) => {
    const scenario = await loadScenario(join(REPO_ROOT, 'scenarios', file));
    const inline = vi.spyOn(Simulator.prototype, 'countInline');
    const ahead = new MemorySink();
    await runScenario(scenario, { sink: ahead });
    const stepsAhead = inline.mock.calls.reduce((sum, [n]) => sum + n, 0);
    inline.mockClear();
    const stepped = new MemorySink();
    await runScenario(scenario, { sink: stepped, runAhead: false });
    expect(inline.mock.calls.reduce((sum, [n]) => sum + n, 0)).toBe(0);
    // The plan must actually have skipped dispatching a good share of the steps.
    expect(stepsAhead).toBeGreaterThan(0.1 * (stepped.summary?.events ?? 0));
    expect(ahead.summary).toEqual(stepped.summary);
    expect(ahead.seconds).toEqual(stepped.seconds);
    expect(ahead.requests.length).toBe(stepped.requests.length);
    expect(ahead.requests).toEqual(stepped.requests);
  });
});
