/**
 * How a scenario problem is described while validating: a detail (the part of a message after the
 * path) and what was expected. Zod carries these in an issue's message as JSON, produced by
 * {@link scenarioErrorMap} for zod's own checks and by {@link report} for the scenario's refinements,
 * so the loader can add the file position and the full path afterwards.
 */
import type { z } from 'zod';
import { kindOfValue, nearestName, schemaKeys, showValue, ZOD_TYPE_NAMES } from '../../gate/index.js';

/** A problem found in a scenario, before it is placed in the file. */
export interface IssueText {
  /** The message after the path, e.g. `70000 is above the maximum 65536`. */
  detail: string;
  /** What the field must be, e.g. `an integer from 0 to 65536`. */
  expected: string;
  /** For unknown keys: the keys the mapping allows. */
  known?: string[];
  /** Place the problem at the key rather than the value (an unknown key). */
  atKey?: boolean;
}

/** Renders a value for a message: strings quoted, objects as compact JSON (one rule for every file format). */
export const show = showValue;

/** Encodes an issue text as a zod message. */
export function encode(text: IssueText): string {
  return JSON.stringify(text);
}

/** Decodes a zod message; a message that is not ours becomes the detail. */
export function decode(message: string): IssueText {
  try {
    const v = JSON.parse(message) as Partial<IssueText>;
    if (typeof v.detail === 'string' && typeof v.expected === 'string') {
      const out: IssueText = { detail: v.detail, expected: v.expected };
      if (Array.isArray(v.known)) out.known = v.known;
      if (v.atKey === true) out.atKey = true;
      return out;
    }
  } catch {
    // not ours
  }
  return { detail: message, expected: 'a valid value' };
}

/** Reports a problem from a refinement: `path` is relative to the refined value. */
export function report(
  ctx: z.RefinementCtx,
  path: readonly (string | number)[],
  input: unknown,
  detail: string,
  expected: string,
  atKey = false,
): void {
  const text: IssueText = atKey ? { detail, expected, atKey } : { detail, expected };
  ctx.addIssue({ code: 'custom', path: [...path], input, message: encode(text) });
}

function num(n: number | bigint): string {
  return String(n);
}

/**
 * Zod error map for scenario validation: every message reads like the gate's own
 * (`70000 is above the maximum 65536`, `"x" is not one of a, b`) and names what was expected.
 */
export const scenarioErrorMap: z.core.$ZodErrorMap = (iss) => {
  const input = iss.input;
  switch (iss.code) {
    case 'invalid_type': {
      const expected = ZOD_TYPE_NAMES[iss.expected] ?? `a ${iss.expected}`;
      if (input === undefined) return encode({ detail: `missing; expected ${expected}`, expected });
      if (iss.expected === 'int' && typeof input === 'number') {
        return encode({ detail: `${show(input)} is not an integer`, expected });
      }
      return encode({ detail: `${kindOfValue(input)} is not ${expected}`, expected });
    }
    case 'too_big': {
      if (iss.origin === 'array') {
        const expected = `a list of at most ${num(iss.maximum)} items`;
        return encode({ detail: `a list of ${(input as unknown[]).length} items is too long`, expected });
      }
      if (iss.origin === 'string') {
        const expected = `a string of at most ${num(iss.maximum)} characters`;
        return encode({ detail: `${show(input)} is too long`, expected });
      }
      if (iss.inclusive === false) {
        const expected = `a number below ${num(iss.maximum)}`;
        return encode({ detail: `${show(input)} is not below ${num(iss.maximum)}`, expected });
      }
      const expected = `a number at most ${num(iss.maximum)}`;
      return encode({ detail: `${show(input)} is above the maximum ${num(iss.maximum)}`, expected });
    }
    case 'too_small': {
      if (iss.origin === 'array') {
        const expected = `a list of at least ${num(iss.minimum)} item${Number(iss.minimum) === 1 ? '' : 's'}`;
        return encode({ detail: 'the list is too short', expected });
      }
      if (iss.origin === 'string') {
        const expected = `a string of at least ${num(iss.minimum)} character${Number(iss.minimum) === 1 ? '' : 's'}`;
        return encode({ detail: `${show(input)} is too short`, expected });
      }
      if (iss.inclusive === false) {
        const expected = `a number above ${num(iss.minimum)}`;
        return encode({ detail: `${show(input)} is not above ${num(iss.minimum)}`, expected });
      }
      const expected = `a number at least ${num(iss.minimum)}`;
      return encode({ detail: `${show(input)} is below the minimum ${num(iss.minimum)}`, expected });
    }
    case 'invalid_value': {
      const expected = `one of ${iss.values.map((v) => String(v)).join(', ')}`;
      return encode({ detail: `${show(input)} is not ${expected}`, expected });
    }
    case 'invalid_union': {
      const options = iss.options as readonly unknown[] | undefined | null;
      if (typeof iss.discriminator === 'string' && Array.isArray(options)) {
        const expected = `one of ${options.map((v) => String(v)).join(', ')}`;
        const value =
          input !== null && typeof input === 'object'
            ? (input as Record<string, unknown>)[iss.discriminator]
            : undefined;
        if (value === undefined) return encode({ detail: `missing; expected ${expected}`, expected });
        return encode({ detail: `${show(value)} is not ${expected}`, expected });
      }
      return encode({
        detail: `${kindOfValue(input)} matches none of the allowed forms`,
        expected: 'one of the allowed forms',
      });
    }
    case 'invalid_format':
      return encode({ detail: `${show(input)} is not ${iss.format}`, expected: String(iss.format) });
    case 'unrecognized_keys': {
      const known = knownKeys(iss.inst) ?? [];
      return encode({ detail: 'unknown key', expected: `one of ${known.join(', ')}`, known });
    }
    case 'not_multiple_of':
      return encode({
        detail: `${show(input)} is not a multiple of ${iss.divisor}`,
        expected: `a multiple of ${iss.divisor}`,
      });
    default:
      return undefined;
  }
};

/** The known keys of an object schema, for "unknown key" messages (undefined when not an object). */
export function knownKeys(inst: unknown): string[] | undefined {
  return schemaKeys(inst);
}

/** The known key nearest to `key` (fewer edits the shorter the key, at most 3), for a "did you mean" hint. */
export function nearest(key: string, known: readonly string[]): string | undefined {
  return nearestName(key, known, Math.min(4, Math.max(2, Math.floor(key.length / 3) + 1)));
}

/**
 * The detail of a field error's message: the text after its leading `field: `, or the whole
 * message when it does not start with the field (gate and client-model errors name their field
 * first; a scenario report places the path itself).
 */
export function detailAfterField(err: { readonly message: string; readonly field: string }): string {
  return err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
}
