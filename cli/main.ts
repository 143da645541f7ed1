/**
 * The `sluice` command: one subcommand per file in cli/, assembled here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { calibrateCommand } from './calibrate.js';
import { checkCommand } from './check.js';
import { cliffCommand } from './cliff.js';
import { engineCommand } from './engine.js';
import { EXIT_INVALID, reportError } from './errors.js';
import { addExitCodesHelp, unknownCommandMessage } from './exit-codes.js';
import { fidelityCommand } from './fidelity.js';
import { k6PlanCommand } from './k6-plan.js';
import { loadCommand } from './load.js';
import { mergeCommand } from './merge.js';
import { observeCommand } from './observe.js';
import { proxyCommand } from './proxy.js';
import { reportCommand } from './report.js';
import { runCommand } from './run.js';
import { sizeCommand } from './size.js';
import { validateCommand } from './validate.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  description: string;
};

/** Builds the command tree; exported so tests can drive it without a process. */
export function buildProgram(): Command {
  const program = new Command('sluice')
    .description(pkg.description)
    .version(pkg.version, '-V, --version', 'print the version and exit')
    .showHelpAfterError();
  program.addCommand(runCommand());
  program.addCommand(validateCommand());
  program.addCommand(loadCommand());
  program.addCommand(k6PlanCommand());
  program.addCommand(proxyCommand());
  program.addCommand(engineCommand());
  program.addCommand(reportCommand());
  program.addCommand(observeCommand());
  program.addCommand(sizeCommand());
  program.addCommand(mergeCommand());
  program.addCommand(checkCommand());
  program.addCommand(cliffCommand());
  program.addCommand(fidelityCommand());
  program.addCommand(calibrateCommand());
  addExitCodesHelp(program);
  return program;
}

/**
 * A reader that stops early (`sluice run --help | head`) closes the pipe: the rest of the output
 * has nowhere to go, and that is no error. Anything else on the standard streams still throws.
 */
const quieted = new WeakSet<NodeJS.WriteStream>();
export function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  if (quieted.has(stream)) return;
  quieted.add(stream);
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
}

/** Runs the command line; sets process.exitCode instead of exiting mid-stream. */
export async function main(argv: readonly string[]): Promise<void> {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  const program = buildProgram();
  program.exitOverride();
  for (const sub of program.commands) sub.exitOverride();
  const unknown = unknownCommandMessage(program, argv.slice(2));
  if (unknown !== undefined) {
    process.stderr.write(unknown);
    process.exitCode = EXIT_INVALID;
    return;
  }
  try {
    await program.parseAsync(argv as string[]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version exit 0; every other commander error is a usage error (exit 2).
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    // Anything a command did not catch: an input error exits 2, anything else 4 (never 1, a finding).
    reportError(err);
  }
}
