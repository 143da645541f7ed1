/**
 * `sluice check <scenario...> --baseline FILE [--tolerance METRIC=REL[+ABS] ...]
 * [--update-baseline] [--junit FILE] [--seeds K] [--workers N] [--json]`:
 * runs scenarios at fixed seeds and compares goodput and the other key
 * figures with the baseline. Exit 0 when nothing regressed, 1 on a
 * regression (or a scenario the baseline lacks), 2 on bad input.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command } from 'commander';
import { loadScenario } from '../sim/scenario/load.js';
import { emptyBaseline, readBaseline, writeBaseline } from '../sweep/baseline.js';
import { CHECK_UPDATE_KIND, compareWithBaseline, runScenarios, updatedBaseline } from '../sweep/check.js';
import { checkText } from '../sweep/check-format.js';
import { junitXml } from '../sweep/junit.js';
import { defaultWorkers } from '../sweep/pool.js';
import { ProgressBar } from '../sweep/progress.js';
import { CHECK_METRICS, toleranceTable } from '../sweep/tolerance.js';
import { intFlag, reportSweepError } from './size.js';

interface CheckCliOptions {
  baseline: string;
  tolerance: string[];
  updateBaseline?: boolean;
  junit?: string;
  seeds: string;
  workers?: string;
  json?: boolean;
}

/** Exit code of a check that found a regression. */
export const EXIT_REGRESSION = 1;

const collect = (v: string, prev: string[]): string[] => [...prev, v];

export function checkCommand(): Command {
  return new Command('check')
    .description(
      'run scenarios at fixed seeds and fail (exit 1) when goodput or another key figure regressed against the baseline',
    )
    .argument('<scenarios...>', 'scenario files (YAML)')
    .requiredOption('--baseline <file>', 'the baseline JSON (e.g. baselines/scenarios.json)')
    .option(
      '--tolerance <METRIC=REL[+ABS]>',
      `how far a figure may move: relative, plus absolute (repeatable; * for all); compared: ${CHECK_METRICS.join(', ')}`,
      collect,
      [],
    )
    .option('--update-baseline', 'write the runs into the baseline instead of comparing')
    .option('--junit <file>', 'write JUnit XML, one testcase per scenario')
    .option('--seeds <k>', 'seeds per scenario (seed 0 is the scenario seed)', '1')
    .option('--workers <n>', 'worker threads (default: all cores; 0 runs in process)')
    .option('--json', 'print the result as one JSON object')
    .action(async (files: string[], opts: CheckCliOptions) => {
      try {
        const seeds = intFlag('--seeds', opts.seeds, 1, 1000);
        const workers =
          opts.workers === undefined ? defaultWorkers() : intFlag('--workers', opts.workers, 0, 1024);
        const update = opts.updateBaseline === true;
        const baseline = update && !existsSync(opts.baseline) ? emptyBaseline() : readBaseline(opts.baseline);
        const tolerances = toleranceTable(opts.tolerance, baseline.tolerances);
        const scenarios = [];
        for (const f of files) scenarios.push(await loadScenario(f));
        const bar = new ProgressBar('check');
        const runs = await runScenarios(scenarios, seeds, {
          workers,
          onProgress: (d, t) => bar.update(d, t),
        });
        bar.done();
        if (update) {
          mkdirSync(dirname(opts.baseline), { recursive: true });
          writeBaseline(opts.baseline, updatedBaseline(baseline, runs));
          const msg = `baseline ${opts.baseline}: wrote ${runs.length} scenario${runs.length === 1 ? '' : 's'} × ${seeds} seed${seeds === 1 ? '' : 's'}`;
          process.stdout.write(
            opts.json
              ? `${JSON.stringify({ kind: CHECK_UPDATE_KIND, updated: opts.baseline, scenarios: runs.map((r) => r.name) })}\n`
              : `${msg}\n`,
          );
          return;
        }
        const result = compareWithBaseline(runs, baseline, tolerances);
        if (opts.junit) {
          mkdirSync(dirname(opts.junit), { recursive: true });
          writeFileSync(opts.junit, junitXml(result));
        }
        process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : checkText(result));
        if (result.failed) process.exitCode = EXIT_REGRESSION;
      } catch (err) {
        reportSweepError(err);
      }
    });
}
