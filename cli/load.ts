/**
 * `sluice load --target URL --scenario FILE [--out DIR] [--json] [--duration-scale X]`: drives a
 * real target (the proxied gate, or engines directly) with the scenario's open-loop traffic and
 * prints the summary in the simulator's format; with --out, also writes requests.csv,
 * timeseries.csv, summary.json and load.json (how well the schedule was kept, inter-token
 * latency, protocols, transport errors) and the report `sluice run --out` writes (`--no-report`: not). Exits 3 (the measurement is invalid) when the driver fell
 * behind: more than --max-late-share of its sends late by > 10 ms. A scenario with `gate.policy`
 * needs --jwt-secret-file: every request then carries its policy envelope (a JWT of its tenant and
 * class, the deadline and idempotency headers, its route; loadgen/driver/envelope.ts).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { DEFER_POLL_MS } from '../loadgen/driver/deferred.js';
import { runLoad } from '../loadgen/driver/driver.js';
import { type LoadEnvelope, TokenCache } from '../loadgen/driver/envelope.js';
import { LATE_MS, lateness, latenessText, MAX_LATE_SHARE } from '../loadgen/driver/lag.js';
import { type PreparedLoad, prepareLoad } from '../loadgen/driver/scenario.js';
import { writeRunReport } from '../reports/run-report.js';
import { FileSink, MemorySink, type RunSink } from '../sim/run/sinks.js';
import { loadScenario } from '../sim/scenario/load.js';
import { ProgressBar } from '../sweep/progress.js';
import { EXIT_UNRESOLVED, intArg, reportError, shareArg, UsageError } from './errors.js';
import { summaryText } from './summary-text.js';

/** Parses a positive number flag value, naming the flag in the error. */
export function positiveArg(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(value)} is not a positive number`);
    return n;
  };
}

interface LoadFlags {
  target: string;
  scenario: string;
  out?: string;
  json?: boolean;
  report: boolean;
  durationScale?: number;
  seed?: number;
  graceS?: number;
  model?: string;
  maxLateShare?: number;
  jwtSecretFile?: string;
  deferPollMs?: number;
}

/** Tokens stay valid this long past the run's end (and grace), s. */
const TOKEN_MARGIN_S = 3600;

/**
 * The envelope a run of `prepared` sends: none without a policy; with one, the HS256 secret of
 * `--jwt-secret-file` (read as the proxy reads its own, trimmed) is required.
 * @throws UsageError naming the flag when the policy has no secret, or the secret no policy
 */
export function loadEnvelope(
  prepared: Pick<PreparedLoad, 'policy' | 'endMs'>,
  f: { jwtSecretFile?: string; graceS?: number },
  nowS: number = Date.now() / 1000,
): LoadEnvelope | undefined {
  const policy = prepared.policy;
  if (policy === undefined) {
    if (f.jwtSecretFile !== undefined)
      throw new UsageError(
        '--jwt-secret-file: the scenario has no gate.policy, so there are no claims to sign (its requests carry its API keys)',
      );
    return undefined;
  }
  if (f.jwtSecretFile === undefined)
    throw new UsageError(
      `the scenario's policy ${policy.file} classes requests by their JWT claims: give --jwt-secret-file FILE (the proxy's HS256 secret), or the proxy would see every request in its default class with no tenant`,
    );
  let text: string;
  try {
    text = readFileSync(f.jwtSecretFile, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--jwt-secret-file ${f.jwtSecretFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const secret = Buffer.from(text.trim());
  if (secret.length === 0) throw new UsageError(`--jwt-secret-file ${f.jwtSecretFile}: the file is empty`);
  const validForS = prepared.endMs / 1000 + (f.graceS ?? 0) + TOKEN_MARGIN_S;
  return {
    rules: policy.rules,
    tokens: new TokenCache(policy.rules, secret, nowS, validForS),
    policy: policy.policy,
  };
}

export function loadCommand(): Command {
  return new Command('load')
    .description(
      "drive a real target with a scenario's open-loop traffic (latency from scheduled send times)",
    )
    .requiredOption('--target <url>', 'base URL of the target, e.g. http://127.0.0.1:8080')
    .requiredOption('--scenario <file>', 'scenario file (YAML)')
    .option(
      '--out <dir>',
      'write requests.csv, timeseries.csv, summary.json and load.json into this directory',
    )
    .option('--json', 'print the summary as one JSON object')
    .option('--no-report', 'with --out, skip the HTML/Markdown report and charts')
    .option(
      '--duration-scale <x>',
      "multiply the scenario's times by x (rates kept): 0.1 runs a tenth of it",
      positiveArg('--duration-scale'),
    )
    .option('--seed <n>', 'run seed (overrides the scenario file)', intArg('--seed', 0, 2 ** 32 - 1))
    .option(
      '--grace-s <s>',
      'after the end, let requests in flight finish for this long (default 0, as the simulator)',
      positiveArg('--grace-s'),
    )
    .option('--model <name>', 'the "model" field of the requests (omitted by default)')
    .option(
      '--max-late-share <x>',
      `exit 3 (the measurement is invalid) when more than this share of sends were late by > ${LATE_MS} ms (default ${MAX_LATE_SHARE})`,
      shareArg('--max-late-share'),
    )
    .option(
      '--jwt-secret-file <file>',
      "HS256 secret (the proxy's --jwt-secret-file): a gate.policy scenario's requests carry a JWT of their tenant and class, required for such a scenario",
    )
    .option(
      '--defer-poll-ms <ms>',
      `with a policy: time between two polls of a deferred request's status URL (default ${DEFER_POLL_MS})`,
      intArg('--defer-poll-ms', 10, 60_000),
    )
    .action(async (opts: LoadFlags) => {
      try {
        const scenario = await loadScenario(opts.scenario);
        const prepared = await prepareLoad(scenario, {
          ...(opts.durationScale === undefined ? {} : { durationScale: opts.durationScale }),
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        });
        const envelope = loadEnvelope(prepared, opts);
        for (const w of prepared.warnings) process.stderr.write(`sluice load: note: ${w}\n`);
        if (opts.out) mkdirSync(opts.out, { recursive: true });
        // A policy run's records carry the simulator's class columns (class, disposition, reason, ...).
        const sink: RunSink = opts.out
          ? new FileSink(opts.out, [], { classColumns: envelope?.policy !== undefined })
          : new MemorySink(false);
        // Progress on stderr: a bar on a TTY, a line every few seconds elsewhere.
        const bar = new ProgressBar('sluice load', process.stderr, { unit: ' s' });
        const totalS = Math.ceil(prepared.endMs / 1000);
        const result = await runLoad({
          ...prepared,
          target: opts.target,
          sink,
          ...(envelope === undefined ? {} : { envelope }),
          ...(opts.deferPollMs === undefined ? {} : { deferPollMs: opts.deferPollMs }),
          ...(opts.graceS === undefined ? {} : { graceMs: opts.graceS * 1000 }),
          ...(opts.model === undefined ? {} : { payload: { model: opts.model } }),
          onSecond: (t: number, n: number) => bar.update(t, totalS, `${n} in flight`),
        });
        bar.done();
        const extras = {
          target: opts.target,
          duration_scale: prepared.durationScale,
          schedule: result.schedule,
          itl_ms: result.itl_ms,
          protocols: result.protocols,
          transport_errors: result.transport_errors,
          deferred_followed: result.deferred_followed,
          warnings: prepared.warnings,
        };
        const late = lateness(result.schedule, opts.maxLateShare);
        if (opts.out)
          await writeFile(
            join(opts.out, 'load.json'),
            `${JSON.stringify({ ...extras, lateness: late }, null, 2)}\n`,
          );
        if (!late.valid) {
          process.exitCode = EXIT_UNRESOLVED;
          process.stderr.write(
            `sluice load: the measurement is invalid: the driver fell behind its schedule, ${latenessText(late)}\n`,
          );
        }
        // The same report as `sluice run --out` writes, from the same files.
        const report = opts.out && opts.report ? await writeRunReport(opts.out) : undefined;
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(result.summary)}\n`);
          return;
        }
        const s = result.schedule;
        process.stdout.write(summaryText(result.summary));
        process.stdout.write(
          `schedule      ${s.sends} sends, ${s.late_sends} late by > 10 ms (lag p50 ${s.lag_p50_ms} p99 ${s.lag_p99_ms} max ${s.lag_max_ms} ms)${s.kept_schedule ? '' : ': the driver could not keep the schedule'}\n` +
            `protocols     HTTP/1.1 ${result.protocols.http1}, HTTP/2 ${result.protocols.h2}\n` +
            (envelope === undefined
              ? ''
              : `deferred      ${result.deferred_followed} answered 202 and followed to their status URL\n`),
        );
        if (opts.out)
          process.stdout.write(`outputs in ${opts.out}${report ? `; report ${report.html}` : ''}\n`);
      } catch (err) {
        reportError(err);
      }
    });
}
