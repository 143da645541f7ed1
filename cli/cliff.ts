/**
 * `sluice cliff --scenario FILE [--engines N] [--profile NAME] [--rates A:B:STEP|A,B,C] [--target URL]
 * [--out DIR] [--step-s S] [--time-scale X] [--haproxy] [--modes LIST] [--json]`: starts emulated
 * engines and the proxy on loopback (or drives a given target), steps offered load through and
 * past saturation with the gate off, in observe and in enforce, and writes the cliff report
 * (goodput, throughput, shed rate and p95 TTFT against offered load per mode). With --haproxy,
 * a fourth line for HAProxy 2.6 in front of the same engines (skipped, exit 0, when it is not
 * installed). With --simulate, the same steps run in the simulator instead (seconds, no sockets);
 * with --compare-simulated, in both, and the report puts each real step beside its simulated one.
 * Exits 3 when a step is invalid (the driver fell behind: more than --max-late-share of its sends
 * late); the report then leaves that step out of its chart, findings and table.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { GateMode } from '../cliff/bench.js';
import { type CliffResult, runCliff } from '../cliff/cliff.js';
import { UnsupportedScenarioError } from '../cliff/errors.js';
import { defaultRates, parseRates, RatesError } from '../cliff/rates.js';
import { writeCliffOutputs } from '../cliff/report.js';
import { MIN_TIME_SCALE, scenarioRate } from '../cliff/scale-scenario.js';
import { runSimulatedCliff } from '../cliff/simulated.js';
import { allStepsValid } from '../cliff/validity.js';
import { MAX_LATE_SHARE } from '../loadgen/driver/lag.js';
import { loadScenario } from '../sim/scenario/load.js';
import { ProgressBar } from '../sweep/progress.js';
import { EXIT_UNRESOLVED, intArg, reportError, shareArg, UsageError } from './errors.js';
import { positiveArg } from './load.js';

interface CliffFlags {
  scenario: string;
  engines?: number;
  profile?: string;
  rates?: string;
  target?: string;
  out?: string;
  stepS: number;
  timeScale: number;
  haproxy?: boolean;
  modes?: string;
  json?: boolean;
  seed?: number;
  simulate?: boolean;
  compareSimulated?: boolean;
  maxLateShare?: number;
}

/** The flags a simulated cliff cannot follow: they change or replace the real run's engines. */
const ENGINE_FLAGS = { engines: '--engines', profile: '--profile', target: '--target' } as const;

/** Those of `flags` (option key to flag name) that were given, by name. */
function given(opts: CliffFlags, flags: Partial<Record<keyof CliffFlags, string>>): string[] {
  return Object.entries(flags)
    .filter(([key]) => {
      const v = opts[key as keyof CliffFlags];
      return v !== undefined && v !== false;
    })
    .map(([, name]) => name as string);
}

const MODES: readonly GateMode[] = ['off', 'observe', 'enforce'];

/** Parses `--modes off,enforce`. */
function modesArg(v: string): GateMode[] {
  const out = v.split(',').map((m) => m.trim());
  for (const m of out)
    if (!MODES.includes(m as GateMode))
      throw new InvalidArgumentError(`--modes: ${JSON.stringify(m)} is not one of ${MODES.join(', ')}`);
  return out as GateMode[];
}

const cell = (v: number | null, w: number): string =>
  (v === null ? '-' : String(Math.round(v * 100) / 100)).padStart(w);

/** The steps as a text table. */
export function cliffText(r: CliffResult): string {
  const lines = [
    `cliff ${r.scenario} (engine time)`,
    `  ${'line'.padEnd(8)} ${'offered'.padStart(8)} ${'goodput'.padStart(8)} ${'thruput'.padStart(8)} ${'shed'.padStart(6)} ${'TTFT p95'.padStart(9)} ${'late'.padStart(11)}`,
    ...r.steps.map(
      (s) =>
        `  ${s.line.padEnd(8)} ${cell(s.offered_rps, 8)} ${cell(s.goodput_rps, 8)} ${cell(s.throughput_rps, 8)} ${cell(s.shed_rate, 6)} ${cell(s.ttft_p95_ms, 9)} ${`${s.late_sends}/${s.sends}`.padStart(11)}${s.valid ? '' : ' INVALID'}`,
    ),
    ...r.notes.map((n) => `note: ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The `sluice cliff` command. */
export function cliffCommand(): Command {
  return new Command('cliff')
    .description(
      'step offered load past saturation against the proxied gate (off, observe, enforce) and write the cliff report',
    )
    .requiredOption('--scenario <file>', 'scenario file (YAML): request shapes, SLOs and the gate rule')
    .option(
      '--engines <n>',
      "emulated engines to start (default: the scenario's)",
      intArg('--engines', 1, 64),
    )
    .option('--profile <name>', "engine profile (fixed, a deployment, exponential; default: the scenario's)")
    .option(
      '--rates <a:b:step|a,b,c>',
      'offered loads, req/s of engine time: a range or a rising list (default: 0.5, 1, 1.5, 2, 3 x the scenario rate)',
    )
    .option('--target <url>', 'drive this running gate instead of starting engines and a proxy (one line)')
    .option('--out <dir>', 'output directory (default out/cliff-<scenario>)')
    .option('--step-s <s>', 'real seconds per step', positiveArg('--step-s'), 4)
    .option(
      '--time-scale <x>',
      'engine ms per real ms (10: a 10 s engine step takes 1 s)',
      positiveArg('--time-scale'),
      1,
    )
    .option('--haproxy', 'add a line for HAProxy 2.6 in front of the same engines (if installed)')
    .option(
      '--modes <list>',
      'gate modes to run, comma-separated (default: off,observe,enforce; enforce for an SMG-dialect scenario)',
    )
    .option('--seed <n>', 'run seed (overrides the scenario file)', intArg('--seed', 0, 2 ** 32 - 1))
    .option('--json', 'print the steps as one JSON object')
    .option(
      '--compare-simulated',
      'also run the same steps in the simulator and add a real-against-simulated table to the report',
    )
    .option(
      '--simulate',
      "run the same steps in the simulator, against the scenario's simulated engines (a step is --step-s x --time-scale engine seconds, as in the real run)",
    )
    .option(
      '--max-late-share <x>',
      `a step is invalid (exit 3; left out of the chart and findings) when more than this share of its sends were late by > 10 ms (default ${MAX_LATE_SHARE})`,
      shareArg('--max-late-share'),
    )
    .action(async (opts: CliffFlags) => {
      try {
        if (opts.timeScale < MIN_TIME_SCALE || opts.timeScale > 1000)
          throw new UsageError(
            `--time-scale: ${opts.timeScale} is not a number from ${MIN_TIME_SCALE} to 1000`,
          );
        if (opts.stepS > 600) throw new UsageError(`--step-s: ${opts.stepS} is above 600`);
        const modes = opts.modes === undefined ? undefined : modesArg(opts.modes);
        const realOnly = given(opts, { ...ENGINE_FLAGS, haproxy: '--haproxy' });
        if (opts.simulate && realOnly.length > 0)
          throw new UsageError(
            `--simulate: ${realOnly.join(', ')} only apply to a real cliff (the simulator runs the scenario's engines)`,
          );
        const otherEngines = given(opts, { ...ENGINE_FLAGS, simulate: '--simulate' });
        if (opts.compareSimulated && otherEngines.length > 0)
          throw new UsageError(
            `--compare-simulated: not with ${otherEngines.join(', ')} (the simulator runs the scenario's own engines)`,
          );
        const scenario = await loadScenario(opts.scenario);
        const rates = opts.rates ? parseRates(opts.rates) : defaultRates(scenarioRate(scenario));
        // Progress on stderr: a bar on a TTY (cleared before each step's line), a line every few seconds elsewhere.
        const bar = new ProgressBar('sluice cliff', process.stderr, { unit: ' steps' });
        const say = opts.json
          ? undefined
          : (l: string) => {
              bar.done();
              process.stderr.write(`sluice cliff: ${l}\n`);
            };
        // What a real and a simulated cliff share.
        const steps = {
          rates,
          ...(modes === undefined ? {} : { modes }),
          stepS: opts.stepS,
          timeScale: opts.timeScale,
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        };
        const result = opts.simulate
          ? await runSimulatedCliff(scenario, { ...steps, ...(say ? { progress: say } : {}) })
          : await runCliff(scenario, {
              ...steps,
              ...(opts.engines === undefined ? {} : { engines: opts.engines }),
              ...(opts.profile === undefined ? {} : { profile: opts.profile }),
              ...(opts.target === undefined ? {} : { target: opts.target }),
              ...(opts.haproxy ? { haproxy: true } : {}),
              ...(opts.maxLateShare === undefined ? {} : { maxLateShare: opts.maxLateShare }),
              ...(say ? { progress: say } : {}),
              onStep: (d: number, t: number) => bar.update(d, t),
            });
        bar.done();
        if (result.haproxySkipped) process.stderr.write(`sluice cliff: ${result.haproxySkipped}\n`);
        const simulated = opts.compareSimulated ? await runSimulatedCliff(scenario, steps) : undefined;
        const out = opts.out ?? join('out', `cliff-${scenario.name}${opts.simulate ? '-simulated' : ''}`);
        mkdirSync(out, { recursive: true });
        await writeCliffOutputs(out, result, simulated);
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(simulated === undefined ? result : { ...result, simulated })}\n`
            : `${cliffText(result)}${simulated === undefined ? '' : cliffText(simulated)}report in ${join(out, 'report')}\n`,
        );
        if (!allStepsValid(result.steps)) process.exitCode = EXIT_UNRESOLVED;
      } catch (err) {
        const usage = err instanceof UnsupportedScenarioError || err instanceof RatesError;
        reportError(usage ? new UsageError((err as Error).message) : err);
      }
    });
}
