/**
 * `sluice fidelity --scenario FILE [--json] [--time-scale X] [--duration-scale X] [--seed N]`:
 * runs the scenario in the simulator and for real (the proxy in front of emulated engines on
 * loopback, the open-loop driver) and prints the differences: goodput, refusals by reason, TTFT
 * p50/p95, queue wait. Signed relative differences are (real - simulated) / simulated; null where
 * the simulated value is 0 and the real one is not.
 *
 * Exit 0 when every target is met, 1 when one is missed, 3 when the run is invalid (the driver fell
 * behind its schedule beyond --max-late-share, or the runs did not offer the same requests: the
 * targets are then not judged).
 */
import { Command } from 'commander';
import { UnsupportedScenarioError } from '../cliff/errors.js';
import { MIN_TIME_SCALE } from '../cliff/scale-scenario.js';
import type { Pair } from '../fidelity/compare.js';
import { type FidelityResult, runFidelity } from '../fidelity/fidelity.js';
import { type FidelityStatus, verdictText } from '../fidelity/verdict.js';
import { MAX_LATE_SHARE } from '../loadgen/driver/lag.js';
import { loadScenario } from '../sim/scenario/load.js';
import { ProgressBar } from '../sweep/progress.js';
import {
  EXIT_FINDING,
  EXIT_OK,
  EXIT_UNRESOLVED,
  intArg,
  reportError,
  shareArg,
  UsageError,
} from './errors.js';
import { positiveArg } from './load.js';

interface FidelityFlags {
  scenario: string;
  json?: boolean;
  timeScale?: number;
  durationScale?: number;
  seed?: number;
  maxLateShare?: number;
}

/** The exit code of a fidelity verdict: 0 met, 1 a target missed, 3 invalid (not judged). */
export function fidelityExitCode(status: FidelityStatus): number {
  return status === 'met' ? EXIT_OK : status === 'missed' ? EXIT_FINDING : EXIT_UNRESOLVED;
}

const pct = (d: number | null): string =>
  d === null ? 'n/a' : `${d >= 0 ? '+' : ''}${(d * 100).toFixed(1)} %`;
const num = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2));

/** The comparison as aligned text. */
export function fidelityText(r: FidelityResult): string {
  const row = (name: string, p: Pair | undefined) =>
    p
      ? `  ${name.padEnd(22)} ${num(p.simulated).padStart(10)} ${num(p.real).padStart(10)} ${pct(p.rel_diff).padStart(9)}`
      : '';
  const f = r.figures;
  const lines = [
    `fidelity ${r.scenario} (seed ${r.seed}, duration scale ${r.duration_scale}, time scale ${r.time_scale})`,
    `  ${'figure'.padEnd(22)} ${'simulated'.padStart(10)} ${'real'.padStart(10)} ${'diff'.padStart(9)}`,
    row('goodput req/s', f.goodput_rps),
    row('throughput req/s', f.throughput_rps),
    row('refusals', f.sheds),
    ...Object.entries(r.sheds_by_reason).map(([k, p]) => row(`  ${k}`, p)),
    row('TTFT p50 ms', f.ttft_p50_ms),
    row('TTFT p95 ms', f.ttft_p95_ms),
    f.ttft_streamed_p95_ms?.simulated || f.ttft_streamed_p95_ms?.real
      ? row('TTFT p95 ms (streamed)', f.ttft_streamed_p95_ms)
      : '',
    row('queue wait p50 ms', f.queue_wait_p50_ms),
    row('queue wait p95 ms', f.queue_wait_p95_ms),
    row('offered', f.offered),
  ].filter((l) => l !== '');
  const t = r.targets;
  const judged = r.verdict.status !== 'invalid';
  const met = (name: string, c: FidelityResult['targets']['goodput']) =>
    `${name} ${judged ? (c.met ? 'met' : 'missed') : 'not judged'} (${pct(c.rel_diff)} vs ±${c.target * 100} %)`;
  lines.push(
    `targets: ${met('goodput', t.goodput)}; ${met('refusals', t.sheds)}; ${met('TTFT p95', t.ttft_p95)}`,
    `same arrivals: ${r.schedule_check.equal ? 'yes' : 'NO'} (${r.schedule_check.simulated} simulated, ${r.schedule_check.real} sent, largest send-time difference ${r.schedule_check.max_send_diff_ms} ms)`,
    `real run: ${r.real_run.wall_s} s wall, ${r.real_run.late_sends} of ${r.real_run.sends} sends late (lag p99 ${r.real_run.schedule_lag_p99_ms} ms), engine step lag max ${r.real_run.engine_lag_max_ms} ms, in flight after ${r.real_run.inflight_after}, anomalies ${r.real_run.anomalies}`,
    ...r.notes.map((n) => `note: ${n}`),
    verdictText(r.verdict),
  );
  return `${lines.join('\n')}\n`;
}

/** The `sluice fidelity` command. */
export function fidelityCommand(): Command {
  return new Command('fidelity')
    .description(
      'run a scenario in the simulator and for real (proxy + emulated engines on loopback) and compare them',
    )
    .requiredOption('--scenario <file>', 'scenario file (YAML)')
    .option('--json', 'print one JSON object (diffs, both summaries)')
    .option(
      '--time-scale <x>',
      'run the real side on a clock x times faster (engines emulated at time scale x; rates * x, times / x); below 1, slow motion',
      positiveArg('--time-scale'),
    )
    .option(
      '--duration-scale <x>',
      'run this share of the scenario on both sides (rates kept)',
      positiveArg('--duration-scale'),
    )
    .option('--seed <n>', 'run seed (overrides the scenario file)', intArg('--seed', 0, 2 ** 32 - 1))
    .option(
      '--max-late-share <x>',
      `the run is invalid (exit 3, targets not judged) when more than this share of its sends were late by > 10 ms (default ${MAX_LATE_SHARE})`,
      shareArg('--max-late-share'),
    )
    .action(async (opts: FidelityFlags) => {
      try {
        if (opts.timeScale !== undefined && (opts.timeScale < MIN_TIME_SCALE || opts.timeScale > 1000))
          throw new UsageError(
            `--time-scale: ${opts.timeScale} is not a number from ${MIN_TIME_SCALE} to 1000`,
          );
        const scenario = await loadScenario(opts.scenario);
        // Progress on stderr: phase lines (not with --json), and during the real run a bar on a TTY
        // or a line every few seconds elsewhere.
        const bar = new ProgressBar('sluice fidelity: real run', process.stderr, { unit: ' s' });
        const result = await runFidelity(scenario, {
          ...(opts.timeScale === undefined ? {} : { timeScale: opts.timeScale }),
          ...(opts.durationScale === undefined ? {} : { durationScale: opts.durationScale }),
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
          ...(opts.maxLateShare === undefined ? {} : { maxLateShare: opts.maxLateShare }),
          ...(opts.json
            ? {}
            : {
                progress: (l: string) => {
                  bar.done();
                  process.stderr.write(`sluice fidelity: ${l}\n`);
                },
              }),
          onRealSecond: (d: number, t: number) => bar.update(d, t),
        });
        bar.done();
        process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : fidelityText(result));
        process.exitCode = fidelityExitCode(result.verdict.status);
      } catch (err) {
        reportError(err instanceof UnsupportedScenarioError ? new UsageError(err.message) : err);
      }
    });
}
