/**
 * Errors a user can meet in the client models. Each carries a stable `code`, the field, the value and
 * what was expected, so a message reads like `arrival.ratePerSec: -1 is not a positive number`.
 */

/** Stable error codes of the client models. */
export type ClientErrorCode = 'SLUICE_E_CLIENT_CONFIG' | 'SLUICE_E_TRACE_FORMAT';

/** Base class of the client-model errors. */
export class ClientError extends Error {
  /** Stable code, e.g. `SLUICE_E_TRACE_FORMAT`. */
  readonly code: ClientErrorCode;
  constructor(code: ClientErrorCode, message: string) {
    super(message);
    this.name = 'ClientError';
    this.code = code;
  }
}

/** A client-model config (arrivals, distributions, tenants, retries) is invalid. */
export class ClientConfigError extends ClientError {
  /** Dotted path of the offending field, e.g. `tenants[1].weight`. */
  readonly field: string;
  /** The offending value. */
  readonly value: unknown;
  /** What the field must be, e.g. `a positive number`. */
  readonly expected: string;
  constructor(field: string, value: unknown, expected: string) {
    super('SLUICE_E_CLIENT_CONFIG', `${field}: ${formatValue(value)} is not ${expected}`);
    this.name = 'ClientConfigError';
    this.field = field;
    this.value = value;
    this.expected = expected;
  }
}

/** A line of a trace file cannot be read. */
export class TraceFormatError extends ClientError {
  /** The trace file as named by the caller. */
  readonly file: string;
  /** 1-based line number in the file (the header is line 1 of a CSV). */
  readonly line: number;
  /** Column or JSON field, e.g. `ContextTokens`. */
  readonly field: string;
  /** The offending text as found in the file; undefined when the field is missing. */
  readonly value: string | undefined;
  /** What the field must be. */
  readonly expected: string;
  constructor(file: string, line: number, field: string, value: string | undefined, expected: string) {
    const shown =
      value === undefined ? 'missing' : `'${value.length > 60 ? `${value.slice(0, 60)}...` : value}'`;
    super('SLUICE_E_TRACE_FORMAT', `${file}:${line}: ${field} is ${shown}, expected ${expected}`);
    this.name = 'TraceFormatError';
    this.file = file;
    this.line = line;
    this.field = field;
    this.value = value;
    this.expected = expected;
  }
}

/** True when `e` is one of the client-model errors. */
export function isClientError(e: unknown): e is ClientError {
  return e instanceof ClientError;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** Throws unless `value` is a finite number > 0. */
export function requirePositive(field: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) throw new ClientConfigError(field, value, 'a positive number');
  return value;
}

/** Throws unless `value` is a finite number >= 0. */
export function requireNonNegative(field: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new ClientConfigError(field, value, 'a number >= 0');
  return value;
}

/** Throws unless `value` is a finite number in [0, 1]. */
export function requireShare(field: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) {
    throw new ClientConfigError(field, value, 'a share between 0 and 1');
  }
  return value;
}

/** Throws unless `value` is an integer >= `min`. */
export function requireInteger(field: string, value: number, min: number): number {
  if (!(Number.isInteger(value) && value >= min))
    throw new ClientConfigError(field, value, `an integer >= ${min}`);
  return value;
}
