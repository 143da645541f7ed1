/**
 * The build's goodput regression gate: `sluice check` over a few fast library
 * scenarios against the committed baseline (baselines/scenarios.json). A
 * change to the gate or the simulator that moves goodput, TTFT, shed rate or
 * another key figure fails `npm test`. If the change is intended, regenerate
 * the baseline:
 *
 *   node bin/sluice.js check scenarios/*.yaml --baseline baselines/scenarios.json --update-baseline
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { loadScenario } from '../sim/scenario/load.js';
import { readBaseline } from '../sweep/baseline.js';
import { compareWithBaseline, runScenarios } from '../sweep/check.js';
import { checkText } from '../sweep/check-format.js';

/** Library scenarios that run in well under a second each. */
const FAST_SCENARIOS = ['default', 'smg-dialect', 'spike', 'mmck-check', 'synchronised-retries'];

describe('the scenario library against its committed baseline', () => {
  it('has a baseline entry for every library scenario the gate checks', () => {
    const baseline = readBaseline(join(REPO_ROOT, 'baselines', 'scenarios.json'));
    for (const name of FAST_SCENARIOS) expect(Object.keys(baseline.scenarios)).toContain(name);
  });

  it('reproduces goodput and the other key figures of the fast scenarios exactly', async () => {
    const baseline = readBaseline(join(REPO_ROOT, 'baselines', 'scenarios.json'));
    const scenarios = await Promise.all(
      FAST_SCENARIOS.map((n) => loadScenario(join(REPO_ROOT, 'scenarios', `${n}.yaml`))),
    );
    const runs = await runScenarios(scenarios, 1, { workers: 0 });
    const result = compareWithBaseline(runs, baseline, baseline.tolerances ?? {});
    // On failure the message is the check's own table of what moved.
    expect(result.failed, checkText(result)).toBe(false);
  });
});
