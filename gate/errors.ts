/**
 * Errors a user can meet in the gate's configuration. Each carries a stable
 * `code` (documented in docs/errors.md, kept in step by a test), the field's
 * path, the value given and what was expected. A refusal of a request is a
 * decision value, never one of these.
 */

/** Stable codes, one per kind of configuration error. */
export const GATE_ERROR_CODES = {
  SLUICE_E_FIELD_TYPE: 'a field has the wrong JSON type',
  SLUICE_E_FIELD_BOUND: 'a number is outside its bounds',
  SLUICE_E_FIELD_VALUE: 'a string is not one of the allowed values',
  SLUICE_E_FIELD_NULL: 'a field is JSON null, which is refused (use 0 or "inherit" to return to the default)',
  SLUICE_E_FIELD_UNKNOWN: 'a field is not known',
  SLUICE_E_FIELD_MISSING: 'a required field is missing',
  SLUICE_E_DEPTH_WITHOUT_WAIT: 'a queue depth would be left with a wait window of 0',
  SLUICE_E_EXPOSE_SOCKMAP: 'fc_expose_headers on with a sockMapMode that bypasses the gateway',
  SLUICE_E_SOCKMAP_AI: 'a sockMapMode on a service with sse_mode or pd_disagg_mode',
  SLUICE_E_RULE_NOT_FOUND: 'no rule has that key',
  SLUICE_E_SMG_SETTING: 'an SMG admission setting is invalid',
} as const;

export type GateErrorCode = keyof typeof GATE_ERROR_CODES;

/** A configuration error: code, field path, the value given and the bound or expectation. */
export class GateError extends Error {
  override readonly name = 'GateError';
  readonly code: GateErrorCode;
  /** Dotted path of the offending field, e.g. `serviceArguments.fc_max_queue_depth`. */
  readonly field: string;
  /** The value as given. */
  readonly value: unknown;
  /** What was expected, e.g. `an integer from 0 to 65536`. */
  readonly expected: string;

  constructor(code: GateErrorCode, field: string, value: unknown, expected: string, detail?: string) {
    super(detail ?? `${field}: ${formatValue(value)} is invalid: expected ${expected}`);
    this.code = code;
    this.field = field;
    this.value = value;
    this.expected = expected;
  }
}

/** True when `err` is a GateError (also across realms, by shape). */
export function isGateError(err: unknown): err is GateError {
  return (
    err instanceof GateError ||
    (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'GateError')
  );
}

/** Renders a value for a message: strings quoted, everything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
