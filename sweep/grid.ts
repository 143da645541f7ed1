/**
 * `--vary FIELD=SPEC`: which rule fields a sweep may vary (the gate's field
 * table for the loxilb dialect, SMG's admission settings for an SMG
 * scenario), their bounds, the two value forms (a range `a:b:step`, a list
 * `a,b,c`) and the grid they span.
 */
import { FC_FIELD_NAMES, FIELDS, MAX_CEILING, MAX_QUEUE_DEPTH, MAX_WINDOW_MS } from '../gate/index.js';
import { nearest } from '../sim/scenario/issues.js';
import { SweepInputError } from './errors.js';
import { isPolicyField, type PolicyVaryContext, policyField } from './policy-vary.js';
import { roundTo } from './stats.js';

/** A gate dialect. */
export type Dialect = 'loxilb' | 'smg';

/** A field a sweep may vary, with its inclusive bounds. */
export interface VaryField {
  name: string;
  min: number;
  /** Inclusive; Infinity when unbounded. */
  max: number;
  integer: boolean;
}

/** One `--vary`: the field and its values in the order given. */
export interface Vary {
  field: string;
  values: number[];
}

/** A grid point: each varied field's value. */
export type Params = Record<string, number>;

/** The most values one `--vary` may expand to. */
export const MAX_VALUES = 10_000;
/** The most grid points a sweep may have. */
export const MAX_POINTS = 100_000;

/** SMG's admission settings with the bounds `parseSmgSettings` enforces. */
const SMG_FIELDS: readonly VaryField[] = [
  { name: 'max_concurrent_requests', min: -1, max: MAX_CEILING, integer: true },
  { name: 'queue_size', min: 0, max: MAX_QUEUE_DEPTH, integer: true },
  { name: 'queue_timeout_secs', min: 0, max: MAX_WINDOW_MS / 1000, integer: true },
  { name: 'rate_limit_tokens_per_second', min: 0, max: Number.POSITIVE_INFINITY, integer: false },
];

/** The integer fc_* fields, from the gate's field table. */
const FC_FIELDS: readonly VaryField[] = FC_FIELD_NAMES.filter((n) => FIELDS[n].kind === 'int').map((n) => ({
  name: n,
  min: 0,
  max: FIELDS[n].max ?? Number.POSITIVE_INFINITY,
  integer: true,
}));

/** The fields a scenario of `dialect` can vary. */
export function varyFields(dialect: Dialect): readonly VaryField[] {
  return dialect === 'smg' ? SMG_FIELDS : FC_FIELDS;
}

/** The field `name` for `dialect`, or an error that says what can be varied instead. */
function fieldFor(name: string, dialect: Dialect, arg: string, policy?: PolicyVaryContext): VaryField {
  if (isPolicyField(name)) return policyField(name, policy, arg);
  const fields = varyFields(dialect);
  const f = fields.find((x) => x.name === name);
  if (f && policy?.ruleOff === true) {
    throw new SweepInputError(
      `--vary ${JSON.stringify(arg)}: ${name} changes nothing here: the rule's fc_mode is off and the policy (${policy.file}) admits; vary a policy field, e.g. policy.capacity_seats`,
    );
  }
  if (f) return f;
  const names = fields.map((x) => x.name);
  const where = `--vary ${JSON.stringify(arg)}`;
  if ((FC_FIELD_NAMES as readonly string[]).includes(name)) {
    if (dialect === 'smg') {
      throw new SweepInputError(
        `${where}: ${name} is a loxilb rule field, but this scenario uses the smg dialect; vary one of ${names.join(', ')}`,
      );
    }
    const spec = FIELDS[name as keyof typeof FIELDS];
    throw new SweepInputError(
      `${where}: ${name} takes a word (${spec.kind === 'mode' ? 'off, observe, enforce, inherit' : 'on, off, inherit'}), not a number; only numeric fields can be varied: ${names.join(', ')}`,
    );
  }
  if (dialect === 'loxilb' && SMG_FIELDS.some((x) => x.name === name)) {
    throw new SweepInputError(
      `${where}: ${name} is an SMG setting, but this scenario uses the loxilb dialect; vary one of ${names.join(', ')}`,
    );
  }
  const hint = nearest(name, names);
  throw new SweepInputError(
    `${where}: unknown field ${JSON.stringify(name)}${hint ? ` (did you mean ${hint}?)` : ''}; a ${dialect} scenario can vary ${names.join(', ')}`,
  );
}

/** Parses a number of a --vary value; errors name the flag, the field and the text. */
function num(text: string, where: string, field: VaryField): number {
  const t = text.trim();
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) {
    throw new SweepInputError(`${where}: ${JSON.stringify(text)} is not a number`);
  }
  if (field.integer && !Number.isInteger(n)) {
    throw new SweepInputError(`${where}: ${field.name} takes integers; ${t} is not one`);
  }
  return n;
}

function checkBounds(v: number, where: string, field: VaryField): void {
  if (v < field.min)
    throw new SweepInputError(`${where}: ${field.name} ${v} is below the minimum ${field.min}`);
  if (v > field.max)
    throw new SweepInputError(`${where}: ${field.name} ${v} is above the maximum ${field.max}`);
}

/**
 * Parses one `--vary FIELD=SPEC` for a scenario of `dialect`. SPEC is a range
 * `a:b:step` (a, a+step, ... up to b inclusive) or a list `a,b,c` (one value
 * is a list of one). Every value is checked against the field's bounds. A `policy.` field names
 * a number of the scenario's policy (`policy`), checked per point by the policy's parser.
 * @throws SweepInputError naming the flag, the field, the value and the bound
 */
export function parseVary(arg: string, dialect: Dialect, policy?: PolicyVaryContext): Vary {
  const eq = arg.indexOf('=');
  if (eq <= 0) {
    throw new SweepInputError(
      `--vary ${JSON.stringify(arg)}: expected FIELD=SPEC, a range (fc_max_outstanding=8:64:8) or a list (fc_max_queue_depth=0,16,32)`,
    );
  }
  const name = arg.slice(0, eq).trim();
  const spec = arg.slice(eq + 1).trim();
  const field = fieldFor(name, dialect, arg, policy);
  const where = `--vary ${name}=${spec}`;
  let values: number[];
  if (spec.includes(':')) {
    const parts = spec.split(':');
    if (parts.length !== 3) {
      throw new SweepInputError(`${where}: a range is a:b:step (three numbers), got ${parts.length} parts`);
    }
    const [a, b, step] = parts.map((p) => num(p, where, field)) as [number, number, number];
    if (!(step > 0)) throw new SweepInputError(`${where}: the step must be above 0, got ${step}`);
    if (b < a)
      throw new SweepInputError(`${where}: the range runs from ${a} down to ${b}; write it low:high:step`);
    checkBounds(a, where, field);
    checkBounds(b, where, field);
    const count = Math.floor((b - a) / step + 1e-9) + 1;
    if (count > MAX_VALUES) {
      throw new SweepInputError(`${where}: ${count} values; at most ${MAX_VALUES} per field`);
    }
    values = Array.from({ length: count }, (_, k) =>
      field.integer ? a + k * step : roundTo(a + k * step, 9),
    );
  } else {
    if (spec === '') throw new SweepInputError(`${where}: no values; give a range a:b:step or a list a,b,c`);
    values = spec.split(',').map((p) => num(p, where, field));
    for (const v of values) checkBounds(v, where, field);
    const seen = new Set<number>();
    for (const v of values) {
      if (seen.has(v)) throw new SweepInputError(`${where}: ${v} is listed twice`);
      seen.add(v);
    }
  }
  return { field: name, values };
}

/** Parses every `--vary`; a field may be varied once. */
export function parseVaries(args: readonly string[], dialect: Dialect, policy?: PolicyVaryContext): Vary[] {
  const out: Vary[] = [];
  for (const a of args) {
    const v = parseVary(a, dialect, policy);
    if (out.some((x) => x.field === v.field)) {
      throw new SweepInputError(
        `--vary ${v.field}: the field is varied twice; give all its values in one --vary`,
      );
    }
    out.push(v);
  }
  const points = out.reduce((n, v) => n * v.values.length, 1);
  if (points > MAX_POINTS) {
    throw new SweepInputError(`--vary: the grid has ${points} points; at most ${MAX_POINTS}`);
  }
  return out;
}

/**
 * Every point of the grid, the first `--vary` outermost (slowest-changing),
 * the last innermost. With nothing varied, the grid is one empty point.
 */
export function gridPoints(varies: readonly Vary[]): Params[] {
  let points: Params[] = [{}];
  for (const v of varies) {
    const next: Params[] = [];
    for (const p of points) for (const value of v.values) next.push({ ...p, [v.field]: value });
    points = next;
  }
  return points;
}

/** `a=1, b=2` for messages. */
export function paramsText(params: Params): string {
  const entries = Object.entries(params);
  return entries.length === 0 ? 'the scenario as written' : entries.map(([k, v]) => `${k}=${v}`).join(', ');
}
