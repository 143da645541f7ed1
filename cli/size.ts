/**
 * `sluice size <scenario> --vary FIELD=SPEC ... [--slo EXPR ...] [--seeds K]
 * [--seed N] [--workers N] [--out DIR] [--json] [--shard i/n]`: sweeps the
 * gate's settings over a grid × seeds on all cores and recommends the point
 * with the most goodput among those meeting every SLO, as a rule to apply.
 * See docs/sizing.md.
 */
import { Command } from 'commander';
import { loadScenario } from '../sim/scenario/load.js';
import { isSweepInputError, SweepInputError } from '../sweep/errors.js';
import { sweepText } from '../sweep/format.js';
import { METRIC_NAMES } from '../sweep/metrics.js';
import { savePoints, saveRule, writeReportOf } from '../sweep/output.js';
import { parseShard, planSweep } from '../sweep/plan.js';
import { defaultWorkers } from '../sweep/pool.js';
import { ProgressBar } from '../sweep/progress.js';
import { writeShard } from '../sweep/shard.js';
import { runSweepTasks, type SweepResult, sweepResult, tasksOf } from '../sweep/sweep.js';
import { EXIT_FINDING, reportError, UsageError } from './errors.js';

/** Options of `sluice size` as commander hands them over (strings, checked here). */
interface SizeCliOptions {
  vary: string[];
  slo: string[];
  seeds: string;
  seed?: string;
  workers?: string;
  out?: string;
  json?: boolean;
  shard?: string;
  report: boolean;
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** Parses an integer flag value; the error names the flag, the value and the range. */
export function intFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new SweepInputError(`${flag}: ${JSON.stringify(value)} is not an integer from ${min} to ${max}`);
  }
  return n;
}

/** Reports an error: sweep input errors exit 2 like every other input error. */
export function reportSweepError(err: unknown): void {
  reportError(isSweepInputError(err) ? new UsageError(err.message) : err);
}

/**
 * Prints a result (text or JSON) and writes points.json and the report with `out`; exits 1 (a
 * finding) when no point meets every SLO.
 */
export async function emitResult(
  result: SweepResult,
  opts: { json?: boolean; out?: string; report?: boolean },
): Promise<void> {
  const written: string[] = [];
  if (opts.out) {
    written.push(savePoints(opts.out, result));
    const rule = saveRule(opts.out, result);
    if (rule !== undefined) written.push(rule);
    if (opts.report !== false) {
      try {
        written.push(await writeReportOf(opts.out, result));
      } catch (err) {
        process.stderr.write(
          `sluice: the report could not be rendered (${(err as Error).message}); points.json is written, re-render with: sluice report ${opts.out}\n`,
        );
      }
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(sweepText(result));
    if (written.length > 0) process.stdout.write(`\nwrote ${written.join(', ')}\n`);
  }
  if (!result.recommendation.feasible) process.exitCode = EXIT_FINDING;
}

export function sizeCommand(): Command {
  return new Command('size')
    .description(
      'sweep the gate settings over a grid and seeds; recommend the rule with the most goodput within the SLOs',
    )
    .argument('<scenario>', 'scenario file (YAML)')
    .option(
      '--vary <FIELD=SPEC>',
      "a rule field (fc_* for loxilb, SMG setting names for smg), or policy.PATH for a number of the scenario's policy (policy.capacity_seats), and its values: a range a:b:step or a list a,b,c (repeatable)",
      collect,
      [],
    )
    .option(
      '--slo <EXPR>',
      `a constraint METRIC<=X or METRIC>=X (repeatable); metrics: ${METRIC_NAMES.join(', ')}`,
      collect,
      [],
    )
    .option('--seeds <k>', 'seeds per point', '3')
    .option('--seed <n>', 'base seed the per-run seeds derive from (default: the scenario seed)')
    .option(
      '--workers <n>',
      `worker threads (default: all cores, ${defaultWorkers()} here; 0 runs in process)`,
    )
    .option('--out <dir>', 'write points.json and the report (DIR/report); with --shard, the shard file')
    .option('--json', 'print the result as one JSON object')
    .option(
      '--shard <i/n>',
      'run only shard i of n (i from 0) and write DIR/shard-i-of-n.json; combine with sluice merge',
    )
    .option('--no-report', 'with --out, write points.json only')
    .action(async (file: string, opts: SizeCliOptions) => {
      try {
        const seeds = intFlag('--seeds', opts.seeds, 1, 10_000);
        const baseSeed = opts.seed === undefined ? undefined : intFlag('--seed', opts.seed, 0, 2 ** 32 - 1);
        const workers =
          opts.workers === undefined ? defaultWorkers() : intFlag('--workers', opts.workers, 0, 1024);
        const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
        if (shard && !opts.out)
          throw new SweepInputError('--shard: needs --out DIR to write the shard file into');
        if (opts.vary.length === 0 && opts.slo.length === 0 && !shard) {
          process.stderr.write('sluice size: no --vary given; measuring the scenario as written\n');
        }
        const scenario = await loadScenario(file);
        const plan = planSweep(scenario, {
          vary: opts.vary,
          slo: opts.slo,
          seeds,
          ...(baseSeed === undefined ? {} : { baseSeed }),
        });
        const tasks = tasksOf(plan, shard);
        const bar = new ProgressBar(shard ? `shard ${shard.index}/${shard.count}` : 'sweep');
        const results = await runSweepTasks(scenario, tasks, {
          workers,
          onProgress: (done, total) => bar.update(done, total),
        });
        bar.done();
        if (shard && opts.out) {
          const path = writeShard(opts.out, plan, shard, results);
          const line = { shard: `${shard.index}/${shard.count}`, runs: results.size, file: path };
          process.stdout.write(
            opts.json
              ? `${JSON.stringify(line)}\n`
              : `wrote ${path}: ${results.size} runs of shard ${line.shard}\n`,
          );
          return;
        }
        await emitResult(sweepResult(plan, results), opts);
      } catch (err) {
        reportSweepError(err);
      }
    });
}
