/**
 * `sluice validate <scenario...>`: checks scenario files; prints every error
 * with file, line, field, value and what was expected; exit 2 when any is invalid.
 */
import { Command } from 'commander';
import { loadScenario } from '../sim/scenario/load.js';
import { EXIT_INVALID, reportError } from './errors.js';

export function validateCommand(): Command {
  return new Command('validate')
    .description('check scenario files and report every error')
    .argument('<scenario...>', 'scenario files (YAML)')
    .action(async (files: string[]) => {
      let bad = 0;
      for (const f of files) {
        try {
          const s = await loadScenario(f);
          process.stdout.write(`${f}: ok (${s.name}, ${s.endpoints.length} endpoints, ${s.duration_s} s)\n`);
        } catch (err) {
          bad++;
          reportError(err);
        }
      }
      if (bad > 0) process.exitCode = EXIT_INVALID;
    });
}
