/**
 * Exit codes and error reporting shared by the subcommands. One convention for every command
 * (README "Exit codes", and every command's --help):
 * 0 ok; 1 a finding (a regression, a missed target, no point meets the SLOs); 2 bad input or
 * usage (the message names the field, the value and what was expected); 3 the measurement is
 * invalid or unresolved (the harness could not keep up, so nothing is judged); 4 Sluice itself
 * failed (an internal error, with its stack).
 */
import { InvalidArgumentError } from 'commander';
import { isGateError } from '../gate/index.js';
import { isClientError } from '../sim/clients/errors.js';
import { CalibrationInputError } from '../sim/engine/calibrate.js';
import { isScenarioError } from '../sim/scenario/errors.js';

export const EXIT_OK = 0;
/** A finding: a regression, a missed target, no point meets the SLOs. */
export const EXIT_FINDING = 1;
/** Bad input or usage. */
export const EXIT_INVALID = 2;
/** The measurement is invalid or unresolved: the harness could not keep up; nothing judged. */
export const EXIT_UNRESOLVED = 3;
/** Sluice itself failed. */
export const EXIT_INTERNAL = 4;

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

/** Parses a share flag value, a number from 0 to 1, naming the flag in the error. */
export function shareArg(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(value)} is not a number from 0 to 1`);
    return n;
  };
}
