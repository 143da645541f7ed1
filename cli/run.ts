/**
 * `sluice run <scenario> [--seed N] [--out DIR] [--json]`: runs a scenario in
 * the simulator and prints its summary; with --out, also writes the
 * per-request records, the per-second time series and summary.json there.
 */
import { Command } from 'commander';
import { writeRunReport } from '../reports/run-report.js';
import { hasClassColumns } from '../sim/run/policy-admission.js';
import { runScenario } from '../sim/run/run.js';
import { FileSink, MemorySink, type RunSink } from '../sim/run/sinks.js';
import { loadScenario } from '../sim/scenario/load.js';
import { intArg, reportError } from './errors.js';
import { summaryText } from './summary-text.js';

export function runCommand(): Command {
  return new Command('run')
    .description('run a scenario in the simulator and print its summary')
    .argument('<scenario>', 'scenario file (YAML)')
    .option('--seed <n>', 'run seed (overrides the scenario file)', intArg('--seed', 0, 2 ** 32 - 1))
    .option('--out <dir>', 'write requests.csv, timeseries.csv and summary.json into this directory')
    .option('--json', 'print the summary as one JSON object')
    .option('--no-report', 'with --out, skip the HTML/Markdown report and charts')
    .action(async (file: string, opts: { seed?: number; out?: string; json?: boolean; report: boolean }) => {
      try {
        const scenario = await loadScenario(file);
        const sink: RunSink = opts.out
          ? new FileSink(
              opts.out,
              scenario.endpoints.map((e) => e.id),
              { classColumns: hasClassColumns(scenario) },
            )
          : new MemorySink(false);
        const summary = await runScenario(scenario, {
          sink,
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        });
        const report = opts.out && opts.report ? await writeRunReport(opts.out) : undefined;
        process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : summaryText(summary));
        if (opts.out && !opts.json) {
          process.stdout.write(`outputs in ${opts.out}${report ? `; report ${report.html}` : ''}\n`);
        }
      } catch (err) {
        reportError(err);
      }
    });
}
