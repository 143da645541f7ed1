/**
 * Exit codes and error reporting shared by the subcommands: 0 ok, 1 internal
 * failure, 2 invalid input (the message names the field, the value and what
 * was expected).
 */
import { InvalidArgumentError } from 'commander';
import { isGateError } from '../gate/errors.js';
import { isClientError } from '../sim/clients/errors.js';
import { CalibrationInputError } from '../sim/engine/calibrate.js';
import { isScenarioError } from '../sim/scenario/errors.js';

export const EXIT_OK = 0;
export const EXIT_INTERNAL = 1;
export const EXIT_INVALID = 2;

/** An invalid-input error raised by the CLI itself (a flag, a missing file). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** True for errors caused by the user's input rather than by Sluice. */
export function isInputError(err: unknown): boolean {
  return (
    err instanceof UsageError ||
    err instanceof InvalidArgumentError ||
    isGateError(err) ||
    isScenarioError(err) ||
    isClientError(err) ||
    err instanceof CalibrationInputError ||
    (err as NodeJS.ErrnoException | null)?.code === 'ENOENT'
  );
}

/** Prints an error and sets the exit code by its kind. */
export function reportError(err: unknown): void {
  const msg = err instanceof Error ? err.message : String(err);
  if (isInputError(err)) {
    process.stderr.write(`sluice: ${msg}\n`);
    process.exitCode = EXIT_INVALID;
  } else {
    process.stderr.write(`sluice: internal error: ${err instanceof Error && err.stack ? err.stack : msg}\n`);
    process.exitCode = EXIT_INTERNAL;
  }
}

/** Parses a non-negative integer flag value, naming the flag in the error. */
export function intArg(flag: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${flag}: ${JSON.stringify(value)} is not an integer from ${min} to ${max}`,
      );
    }
    return n;
  };
}
