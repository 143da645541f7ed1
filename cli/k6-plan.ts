/**
 * `sluice k6-plan --scenario FILE --out plan.json [--duration-scale X] [--window-ms N]`: writes
 * the plan the k6 cliff script (`loadgen/k6/cliff.ts`) runs: ramping-arrival-rate stages derived
 * from the scenario's schedule, the scheduled requests in order, tenants' API keys, the retry
 * policy and thresholds. k6 cannot read the scenario YAML or a trace file, so this runs in Node.
 */
import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { prepareLoad } from '../loadgen/driver/scenario.js';
import { buildK6Plan } from '../loadgen/shared/plan.js';
import { loadScenario } from '../sim/scenario/load.js';
import { intArg, reportError } from './errors.js';
import { positiveArg } from './load.js';

interface PlanFlags {
  scenario: string;
  out: string;
  durationScale?: number;
  seed?: number;
  windowMs?: number;
  goodputMin?: number;
  model?: string;
}

export function k6PlanCommand(): Command {
  return new Command('k6-plan')
    .description('write the plan (stages, requests, API keys) the k6 cliff script runs for a scenario')
    .requiredOption('--scenario <file>', 'scenario file (YAML)')
    .requiredOption('--out <file>', 'plan file to write (JSON)')
    .option(
      '--duration-scale <x>',
      "multiply the scenario's times by x (rates kept)",
      positiveArg('--duration-scale'),
    )
    .option('--seed <n>', 'run seed (overrides the scenario file)', intArg('--seed', 0, 2 ** 32 - 1))
    .option(
      '--window-ms <n>',
      'stage window (and timeUnit), ms (default 1000)',
      intArg('--window-ms', 1, 3_600_000),
    )
    .option(
      '--goodput-min <share>',
      'goodput threshold, share of offered requests (default 0.8)',
      positiveArg('--goodput-min'),
    )
    .option('--model <name>', 'the "model" field of the requests (omitted by default)')
    .action(async (opts: PlanFlags) => {
      try {
        const scenario = await loadScenario(opts.scenario);
        const p = await prepareLoad(scenario, {
          ...(opts.durationScale === undefined ? {} : { durationScale: opts.durationScale }),
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        });
        for (const w of p.warnings) process.stderr.write(`sluice k6-plan: note: ${w}\n`);
        const plan = buildK6Plan(p.setup, {
          scenario: p.scenario,
          seed: p.seed,
          durationScale: p.durationScale,
          endMs: p.endMs,
          warmupMs: p.warmupMs,
          dialect: p.dialect,
          ceilings: p.ceilings,
          ...(opts.windowMs === undefined ? {} : { windowMs: opts.windowMs }),
          ...(opts.goodputMin === undefined ? {} : { goodputMin: opts.goodputMin }),
          ...(opts.model === undefined ? {} : { model: opts.model }),
          ...(p.traceRecords ? { traceRecords: p.traceRecords } : {}),
        });
        await writeFile(opts.out, `${JSON.stringify(plan)}\n`);
        process.stdout.write(
          `${opts.out}: ${plan.requests.length} requests over ${plan.duration_s} s, ${plan.arrival.stages.length} stages, peak ${plan.arrival.peak} per ${plan.arrival.timeUnit}, VUs ${plan.vus.preAllocated}..${plan.vus.max}\n`,
        );
      } catch (err) {
        reportError(err);
      }
    });
}
