/**
 * `sluice merge DIR|FILE... [--out DIR] [--json]`: combines the shard files of
 * a sweep run with `sluice size --shard i/n` into the result the unsharded
 * sweep gives, printed and (with --out) saved like `sluice size` does.
 */
import { Command } from 'commander';
import { findShardFiles, mergeShards, readShard } from '../sweep/shard.js';
import { emitResult, reportSweepError } from './size.js';

export function mergeCommand(): Command {
  return new Command('merge')
    .description('combine the shard files of a sharded sizing sweep into its result')
    .argument('<paths...>', 'directories holding shard-*-of-*.json files, or the files themselves')
    .option('--out <dir>', 'write points.json and the report (DIR/report)')
    .option('--json', 'print the result as one JSON object')
    .option('--no-report', 'with --out, write points.json only')
    .action(async (paths: string[], opts: { out?: string; json?: boolean; report: boolean }) => {
      try {
        const files = findShardFiles(paths);
        const result = mergeShards(files.map(readShard), files);
        await emitResult(result, opts);
      } catch (err) {
        reportSweepError(err);
      }
    });
}
