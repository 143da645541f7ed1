/**
 * Injected faults: what they are, their defaults and bounds, and strict validation. One table
 * ({@link FAULT_FIELDS}) drives the admin API (snake_case JSON), the CLI flags and the docs.
 */

/** The faults in force. */
export interface Faults {
  /** Multiplies engine step times (the `fixed` profile: TTFT and inter-token time); 1 = normal. */
  readonly slowdown: number;
  /** Fraction of inference requests answered at once with `errorStatus`, 0–1. */
  readonly errorRate: number;
  /** HTTP status of injected errors, 400–599. */
  readonly errorStatus: number;
  /** While true, `GET /metrics` answers 503. */
  readonly metricsOutage: boolean;
  /** `down`: `GET /health` answers 503. */
  readonly health: 'up' | 'down';
  /** Real ms a response pauses after `stallAfterTokens` tokens (0 = no stall). */
  readonly stallMs: number;
  /** Tokens written before the stall, ≥ 0. */
  readonly stallAfterTokens: number;
}

/** No faults. */
export const NO_FAULTS: Faults = {
  slowdown: 1,
  errorRate: 0,
  errorStatus: 500,
  metricsOutage: false,
  health: 'up',
  stallMs: 0,
  stallAfterTokens: 1,
};

/** A fault setting that failed validation; the message names the field, value and expectation. */
export class FaultError extends Error {
  override readonly name = 'FaultError';
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

interface FaultField {
  readonly key: keyof Faults;
  /** JSON name on the admin API. */
  readonly wire: string;
  /** What a valid value is, for errors and docs. */
  readonly expect: string;
  readonly valid: (v: unknown) => boolean;
  readonly doc: string;
}

const num = (lo: number, hi: number) => (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi;
const int = (lo: number, hi: number) => (v: unknown) => Number.isInteger(v) && num(lo, hi)(v);

/** Every fault field, in the admin API's order. */
export const FAULT_FIELDS: readonly FaultField[] = [
  {
    key: 'slowdown',
    wire: 'slowdown',
    expect: 'a number from 0.01 to 1000',
    valid: num(0.01, 1000),
    doc: 'step-time multiplier (fixed profile: TTFT and ITL); applies to steps/tokens timed after the change',
  },
  {
    key: 'errorRate',
    wire: 'error_rate',
    expect: 'a number from 0 to 1',
    valid: num(0, 1),
    doc: 'fraction of inference requests answered with error_status (seeded draw per request)',
  },
  {
    key: 'errorStatus',
    wire: 'error_status',
    expect: 'an integer from 400 to 599',
    valid: int(400, 599),
    doc: 'HTTP status of injected errors',
  },
  {
    key: 'metricsOutage',
    wire: 'metrics_outage',
    expect: 'true or false',
    valid: (v) => typeof v === 'boolean',
    doc: 'GET /metrics answers 503 while true',
  },
  {
    key: 'health',
    wire: 'health',
    expect: '"up" or "down"',
    valid: (v) => v === 'up' || v === 'down',
    doc: 'GET /health answers 503 while "down"',
  },
  {
    key: 'stallMs',
    wire: 'stall_ms',
    expect: 'a number from 0 to 3600000',
    valid: num(0, 3_600_000),
    doc: 'real ms each response pauses after stall_after_tokens tokens (0 = off); for requests started after the change',
  },
  {
    key: 'stallAfterTokens',
    wire: 'stall_after_tokens',
    expect: 'an integer from 0 to 1000000',
    valid: int(0, 1_000_000),
    doc: 'tokens written before the stall',
  },
];

/**
 * Checks a JSON object of fault settings (admin API shape, snake_case; every field optional).
 * @returns the settings as a partial {@link Faults}
 * @throws FaultError naming the first bad or unknown field
 */
export function parseFaultsJson(body: unknown): Partial<Faults> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new FaultError('(body)', '(body): expected a JSON object of fault settings');
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    const f = FAULT_FIELDS.find((x) => x.wire === name);
    if (f === undefined) {
      const known = FAULT_FIELDS.map((x) => x.wire).join(', ');
      throw new FaultError(name, `${name}: unknown field; expected one of ${known}`);
    }
    if (!f.valid(value)) {
      throw new FaultError(name, `${name}: ${JSON.stringify(value)} is not ${f.expect}`);
    }
    out[f.key] = value;
  }
  return out as Partial<Faults>;
}

/**
 * Checks fault settings given in code (camelCase).
 * @throws FaultError naming the first bad or unknown field (by its JSON name)
 */
export function checkFaults(partial: Partial<Faults>): Partial<Faults> {
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(partial)) {
    if (value === undefined) continue;
    const f = FAULT_FIELDS.find((x) => x.key === key);
    wire[f?.wire ?? key] = value;
  }
  return parseFaultsJson(wire);
}

/** The faults in admin-API shape (snake_case). */
export function faultsToJson(f: Faults): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const x of FAULT_FIELDS) out[x.wire] = f[x.key];
  return out;
}
