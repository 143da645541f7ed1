/**
 * Zod error map for policy files: each message names the value and the bound it broke
 * (`70000 is above the maximum 65536`, `"x" is not one of a, b`, `unknown key (did you mean y?)`).
 */
import type { z } from 'zod';
import { nearestName } from '../nearest.js';
import {
  kindOfValue as kindOf,
  schemaKeys,
  showValue,
  ZOD_TYPE_NAMES as TYPE_NAMES,
} from '../yaml-source.js';

export { showValue } from '../yaml-source.js';

/** The message of an unknown key, with the nearest allowed key as a hint. */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const hint = nearestName(key, known, Math.min(4, Math.max(2, Math.floor(key.length / 3) + 1)));
  return hint ? `unknown key (did you mean ${hint}?)` : `unknown key; expected one of ${known.join(', ')}`;
}

/** Marker prefix of an unknown-key message carrying the allowed keys. */
export const UNKNOWN_KEYS = 'unknown-keys:';

export const policyErrorMap: z.core.$ZodErrorMap = (iss) => {
  const input = iss.input;
  switch (iss.code) {
    case 'invalid_type': {
      const expected = TYPE_NAMES[iss.expected] ?? `a ${iss.expected}`;
      if (input === undefined) return `missing; expected ${expected}`;
      if (iss.expected === 'int' && typeof input === 'number') return `${showValue(input)} is not an integer`;
      return `${kindOf(input)} is not ${expected}`;
    }
    case 'too_big':
      if (iss.origin === 'array')
        return `a list of ${(input as unknown[]).length} items is above ${iss.maximum}`;
      if (iss.origin === 'string') return `${showValue(input)} is longer than ${iss.maximum} characters`;
      return iss.inclusive === false
        ? `${showValue(input)} is not below ${iss.maximum}`
        : `${showValue(input)} is above the maximum ${iss.maximum}`;
    case 'too_small':
      if (iss.origin === 'array') return `the list is shorter than ${iss.minimum}`;
      if (iss.origin === 'string') return `${showValue(input)} is shorter than ${iss.minimum} characters`;
      return iss.inclusive === false
        ? `${showValue(input)} is not above ${iss.minimum}`
        : `${showValue(input)} is below the minimum ${iss.minimum}`;
    case 'invalid_value':
      return `${showValue(input)} is not ${iss.values.map((v) => String(v)).join(', ')}`;
    case 'invalid_union': {
      const options = iss.options as readonly unknown[] | undefined | null;
      if (typeof iss.discriminator === 'string' && Array.isArray(options)) {
        const value =
          input !== null && typeof input === 'object'
            ? (input as Record<string, unknown>)[iss.discriminator]
            : undefined;
        const expected = `one of ${options.map((v) => String(v)).join(', ')}`;
        return value === undefined
          ? `missing; expected ${expected}`
          : `${showValue(value)} is not ${expected}`;
      }
      return `${kindOf(input)} matches none of the allowed forms`;
    }
    case 'invalid_format':
      return `${showValue(input)} is not ${iss.format}`;
    case 'invalid_key':
      return `${showValue(input)} is not a name (a lower-case letter, then up to 62 letters, digits, _ or -)`;
    case 'unrecognized_keys':
      return `${UNKNOWN_KEYS}${(schemaKeys(iss.inst) ?? []).join(',')}`;
    case 'custom':
      return iss.message ?? `${showValue(input)} is not valid`;
    default:
      return undefined;
  }
};
