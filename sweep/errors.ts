/**
 * Input errors of the sweep and check commands: a malformed flag, a field
 * out of bounds, an unusable shard or baseline file. The CLI maps them to
 * exit code 2; the message names the flag, the field, the value and the bound.
 */

/** A user's input the sweep or check cannot use. */
export class SweepInputError extends Error {
  override readonly name = 'SweepInputError';
}

/** True when `err` is a SweepInputError (also across worker realms, by name). */
export function isSweepInputError(err: unknown): err is SweepInputError {
  return (
    err instanceof SweepInputError ||
    (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'SweepInputError')
  );
}
