/**
 * `sluice observe --trace FILE --rule RULE.json [--format azure|mooncake|jsonl]
 * [--speedup X] [--profile NAME] [--slo-ttft-ms N] [--shed-share S ...]
 * [--skip-bad-lines] [--limit N] [--out DIR] [--json]`: what enforce would
 * have done to a recorded trace, with the same trace under enforce beside it.
 */
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { observeSections, observeText } from '../observe/format.js';
import { EmptyTraceError, runObserve } from '../observe/observe.js';
import { MAX_REPLAY_S } from '../observe/scenario.js';
import { writeRunReport } from '../reports/run-report.js';
import { type TraceFormat, traceFormatOf } from '../sim/clients/trace-files.js';
import { DEPLOYMENT_PROFILES } from '../sim/engine/profiles.js';
import { intArg, reportError, UsageError } from './errors.js';

const FORMATS: readonly TraceFormat[] = ['azure', 'mooncake', 'jsonl'];

function positive(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(v)} is not a number above 0`);
    return n;
  };
}

function share(v: string, prev: number[] = []): number[] {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n >= 1) {
    throw new InvalidArgumentError(`--shed-share: ${JSON.stringify(v)} is not a share from 0 to below 1`);
  }
  return [...prev, n];
}

/** The format by extension, telling the proxy's decision log from Mooncake by its first line. */
function sniffFormat(file: string): TraceFormat | undefined {
  const byExt = traceFormatOf(file);
  if (byExt !== 'mooncake') return byExt;
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const first = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    return first.includes('"decision"') && first.includes('"time"') ? 'jsonl' : 'mooncake';
  } finally {
    closeSync(fd);
  }
}

interface Opts {
  trace: string;
  rule: string;
  format?: string;
  speedup: number;
  profile: string;
  sloTtftMs: number;
  shedShare?: number[];
  skipBadLines?: boolean;
  limit?: number;
  out?: string;
  json?: boolean;
}

export function observeCommand(): Command {
  return new Command('observe')
    .description('replay a recorded trace through the gate in observe mode: what would enforce have done?')
    .requiredOption(
      '--trace <file>',
      'trace: Azure 2023 CSV, Mooncake JSONL, or the proxy decision log (JSONL)',
    )
    .requiredOption('--rule <file>', 'the rule as JSON: {"serviceArguments": {...}, "endpoints": [...]}')
    .option(
      '--format <format>',
      `trace format: ${FORMATS.join(', ')} (default: .csv azure; .jsonl the decision log if its first line is one, else mooncake)`,
    )
    .option('--speedup <x>', 'replay time compression', positive('--speedup'), 1)
    .option('--profile <name>', 'engine profile of the simulated endpoints', 'llama-3.1-8b-h100')
    .option('--slo-ttft-ms <ms>', 'TTFT objective of a good request, ms', intArg('--slo-ttft-ms', 1), 2000)
    .option('--shed-share <s>', 'report the ceiling that sheds at most this share (repeatable)', share)
    .option('--skip-bad-lines', 'skip unreadable trace lines (counted) instead of failing')
    .option('--limit <n>', 'replay at most this many requests', intArg('--limit', 1))
    .option('--out <dir>', 'write both runs, observe.json and the report here')
    .option('--json', 'print the report as one JSON object')
    .action(async (o: Opts) => {
      try {
        const format = (o.format ?? sniffFormat(o.trace)) as TraceFormat | undefined;
        if (format === undefined || !FORMATS.includes(format)) {
          throw new UsageError(
            `--format: ${JSON.stringify(o.format ?? o.trace)} is not one of ${FORMATS.join(', ')}`,
          );
        }
        const profiles = [...Object.keys(DEPLOYMENT_PROFILES)];
        if (!profiles.includes(o.profile)) {
          throw new UsageError(
            `--profile: ${JSON.stringify(o.profile)} is not one of ${profiles.join(', ')}`,
          );
        }
        let rule: unknown;
        try {
          rule = JSON.parse(readFileSync(o.rule, 'utf8'));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw e;
          throw new UsageError(`--rule: ${o.rule} is not valid JSON: ${(e as Error).message}`);
        }
        if (typeof rule !== 'object' || rule === null || !('serviceArguments' in rule)) {
          throw new UsageError(`--rule: ${o.rule} must hold {"serviceArguments": {...}, "endpoints": [...]}`);
        }
        const result = await runObserve({
          rule: rule as { serviceArguments: Record<string, unknown>; endpoints?: unknown[] },
          trace: resolve(o.trace),
          format,
          speedup: o.speedup,
          profile: o.profile,
          ttftSloMs: o.sloTtftMs,
          maxDurationS: MAX_REPLAY_S,
          shedShares: o.shedShare ?? [0.01, 0.05],
          skipBadLines: o.skipBadLines === true,
          ...(o.limit === undefined ? {} : { limit: o.limit }),
          ...(o.out === undefined ? {} : { outDir: o.out }),
        });
        if (o.out !== undefined) {
          writeFileSync(join(o.out, 'observe.json'), `${JSON.stringify(result, null, 2)}\n`);
          const report = await writeRunReport(join(o.out, 'observe'), {
            outDir: join(o.out, 'report'),
            title: 'Observe mode: what enforce would have done',
            extraSections: observeSections(result),
          });
          if (!o.json) process.stdout.write(`report ${report.html}\n`);
        }
        process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : observeText(result));
      } catch (err) {
        reportError(err instanceof EmptyTraceError ? new UsageError(err.message) : err);
      }
    });
}
