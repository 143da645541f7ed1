/**
 * `sluice check`: runs scenarios at fixed seeds and compares their figures
 * with a stored baseline. A figure that moves beyond its tolerance in its bad
 * direction (goodput down, p95 TTFT up, ...) is a regression; a scenario or
 * seed missing from the baseline fails too, so a new scenario cannot slip in
 * unguarded.
 */
import type { Scenario } from '../sim/scenario/resolve.js';
import { BASELINE_KIND, type BaselineEntry, type BaselineFile, type BaselineRun } from './baseline.js';
import { SweepInputError } from './errors.js';
import type { Figures } from './metrics.js';
import { type PoolOptions, runTasks } from './pool.js';
import { deriveSeeds } from './seeds.js';
import {
  CHECK_METRICS,
  compareFigure,
  type MetricDiff,
  type ToleranceTable,
  toleranceOf,
} from './tolerance.js';

/** One scenario's runs: each seed's figures. */
export interface ScenarioRuns {
  name: string;
  file: string;
  runs: BaselineRun[];
}

/** A moved figure of one seed's run. */
export interface RunDiff extends MetricDiff {
  seed: number;
}

/** The verdict on one scenario. */
export interface ScenarioCheck {
  name: string;
  file: string;
  /** pass: nothing regressed; fail: something regressed; missing: no baseline for it (fails too). */
  status: 'pass' | 'fail' | 'missing';
  /** Every figure that differs from the baseline at all, tolerated or not. */
  moved: RunDiff[];
  /** The moves that are regressions. */
  regressions: RunDiff[];
  /** Why it is missing. */
  message?: string;
}

/** The whole check. */
/** Tag and version of `sluice check --json` (as `size --json` carries sluice.sweep/v1). */
export const CHECK_KIND = 'sluice.check/v1';
/** Tag and version of `sluice check --update-baseline --json`. */
export const CHECK_UPDATE_KIND = 'sluice.check-update/v1';

export interface CheckResult {
  kind: typeof CHECK_KIND;
  scenarios: ScenarioCheck[];
  /** True when any scenario failed or is missing. */
  failed: boolean;
}

/**
 * Runs each scenario at `seeds` seeds (seed 0 is the scenario's own) on the
 * pool; names must be unique, they key the baseline.
 */
export async function runScenarios(
  scenarios: readonly Scenario[],
  seeds: number,
  opts: PoolOptions = {},
): Promise<ScenarioRuns[]> {
  const seen = new Map<string, string>();
  for (const s of scenarios) {
    const other = seen.get(s.name);
    if (other !== undefined) {
      throw new SweepInputError(
        `${s.file}: has the name ${JSON.stringify(s.name)} like ${other}; names key the baseline`,
      );
    }
    seen.set(s.name, s.file);
  }
  const seedLists = scenarios.map((s) => deriveSeeds(s.seed, seeds));
  const tasks = scenarios.flatMap((_, i) =>
    (seedLists[i] ?? []).map((seed, k) => ({ id: i * seeds + k, scenario: i, params: {}, seed })),
  );
  const results = await runTasks(scenarios, tasks, opts);
  return scenarios.map((s, i) => ({
    name: s.name,
    file: s.file,
    runs: (seedLists[i] ?? []).map((seed, k) => ({
      seed,
      figures: results.get(i * seeds + k) as Figures,
    })),
  }));
}

/** Compares one scenario's runs with its baseline entry. */
export function checkScenario(
  runs: ScenarioRuns,
  entry: BaselineEntry | undefined,
  tolerances: ToleranceTable,
): ScenarioCheck {
  const base = { name: runs.name, file: runs.file, moved: [], regressions: [] };
  if (!entry) {
    return {
      ...base,
      status: 'missing',
      message: `no baseline for ${runs.name}; add it with --update-baseline`,
    };
  }
  const moved: RunDiff[] = [];
  for (const run of runs.runs) {
    const b = entry.runs.find((r) => r.seed === run.seed);
    if (!b) {
      return {
        ...base,
        status: 'missing',
        message: `the baseline of ${runs.name} has no run at seed ${run.seed} (it has ${entry.runs.map((r) => r.seed).join(', ') || 'none'}); update it with --update-baseline`,
      };
    }
    for (const metric of CHECK_METRICS) {
      if (!(metric in b.figures)) continue;
      const d = compareFigure(
        metric,
        b.figures[metric] ?? null,
        run.figures[metric] ?? null,
        toleranceOf(tolerances, metric),
      );
      if (d.verdict !== 'same') moved.push({ ...d, seed: run.seed });
    }
  }
  const regressions = moved.filter((d) => d.verdict === 'regressed');
  return { ...base, status: regressions.length > 0 ? 'fail' : 'pass', moved, regressions };
}

/** Compares every scenario's runs with the baseline. */
export function compareWithBaseline(
  runs: readonly ScenarioRuns[],
  baseline: BaselineFile,
  tolerances: ToleranceTable,
): CheckResult {
  const scenarios = runs.map((r) => checkScenario(r, baseline.scenarios[r.name], tolerances));
  return { kind: CHECK_KIND, scenarios, failed: scenarios.some((s) => s.status !== 'pass') };
}

/** The baseline with these scenarios' entries replaced by their runs (others kept). */
export function updatedBaseline(baseline: BaselineFile, runs: readonly ScenarioRuns[]): BaselineFile {
  const scenarios = { ...baseline.scenarios };
  for (const r of runs) scenarios[r.name] = { file: r.file, runs: structuredClone(r.runs) };
  return { ...baseline, kind: BASELINE_KIND, scenarios };
}
