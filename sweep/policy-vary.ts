/**
 * `--vary policy.PATH=SPEC`: sizing a scenario's policy (`gate.policy`) instead of its rule. PATH
 * is a dotted path to a number the policy file already holds (`policy.capacity_seats`,
 * `policy.classes.interactive.guaranteed_seats`); each grid point sets it in a copy of the
 * policy's text (comments and layout kept) that the policy parser then validates, so a point the
 * policy would refuse (guarantees above the capacity) is an input error naming the point.
 */
import { parse, parseDocument } from 'yaml';
import { isPolicyError, parsePolicy } from '../gate/index.js';
import type { Scenario } from '../sim/scenario/resolve.js';
import { SweepInputError } from './errors.js';
import type { Params, VaryField } from './grid.js';

/** The prefix of a policy field. */
export const POLICY_PREFIX = 'policy.';

/** True for a `policy.` field name. */
export const isPolicyField = (name: string): boolean => name.startsWith(POLICY_PREFIX);

/** What parsing a `--vary` needs to know of the scenario's policy. */
export interface PolicyVaryContext {
  /** The policy file as messages name it. */
  readonly file: string;
  /** The policy file's text. */
  readonly text: string;
  /** The scenario's rule has fc_mode off: the policy alone admits, and fc_* fields change nothing. */
  readonly ruleOff: boolean;
}

/** The context of a scenario, or undefined when it has no policy. */
export function policyVaryContext(scenario: Scenario): PolicyVaryContext | undefined {
  const p = scenario.policy;
  if (p === undefined) return undefined;
  const g = scenario.gate;
  const mode = g.dialect === 'loxilb' ? g.rule.serviceArguments.fc_mode : undefined;
  return {
    file: p.file,
    text: p.text,
    ruleOff: g.dialect === 'loxilb' && (mode === undefined || mode === 'off'),
  };
}

/** The numeric leaves of a parsed policy, as dotted paths. */
function numericPaths(value: unknown, prefix: string, out: string[]): string[] {
  if (typeof value === 'number') out.push(prefix);
  else if (value !== null && typeof value === 'object' && !Array.isArray(value))
    for (const [k, v] of Object.entries(value)) numericPaths(v, prefix === '' ? k : `${prefix}.${k}`, out);
  return out;
}

/**
 * The field `name` (`policy.` + a dotted path) of the scenario's policy.
 * @throws SweepInputError when the scenario has no policy or the path names no number in it
 */
export function policyField(name: string, ctx: PolicyVaryContext | undefined, arg: string): VaryField {
  const where = `--vary ${JSON.stringify(arg)}`;
  if (ctx === undefined)
    throw new SweepInputError(`${where}: ${name} is a policy field, but the scenario has no gate.policy`);
  const path = name.slice(POLICY_PREFIX.length);
  const numbers = numericPaths(parse(ctx.text), '', []).filter((p) => p !== 'version');
  if (!numbers.includes(path)) {
    const shown = numbers.slice(0, 12).map((p) => POLICY_PREFIX + p);
    throw new SweepInputError(
      `${where}: ${ctx.file} holds no number at ${path}; a policy field to vary is one the file sets, e.g. ${shown.join(', ')}${numbers.length > shown.length ? ', ...' : ''}`,
    );
  }
  // Bounds and integrality are the policy's own, checked per point by its parser.
  return { name, min: 0, max: Number.POSITIVE_INFINITY, integer: false };
}

/** The policy text with the point's `policy.` values set; the text itself when the point sets none. */
export function pointPolicyText(text: string, params: Params): string {
  const entries = Object.entries(params).filter(([k]) => isPolicyField(k));
  if (entries.length === 0) return text;
  const doc = parseDocument(text);
  for (const [k, v] of entries) doc.setIn(k.slice(POLICY_PREFIX.length).split('.'), v);
  return doc.toString();
}

/**
 * Checks the point's policy as the run would compile it.
 * @throws SweepInputError naming the point and the policy's first complaint
 */
export function checkPolicyPoint(file: string, text: string, where: string): void {
  try {
    parsePolicy(text, file);
  } catch (err) {
    if (!isPolicyError(err)) throw err;
    const first = err.issues[0]?.message ?? err.message;
    throw new SweepInputError(`--vary: the point ${where} is not a valid policy: ${first}`);
  }
}
