import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GATE_ERROR_CODES, GateError, isGateError } from './errors.js';

describe('error codes', () => {
  it('are documented in docs/errors.md, each with the same meaning, and nothing else is', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const rows = doc
      .split('\n')
      .map((line) => line.split('|').map((cell) => cell.trim()))
      .filter((cells) => /^`SLUICE_E_[A-Z_]+`$/.test(cells[1] ?? ''))
      .map((cells) => [cells[1]!.slice(1, -1), cells[2]]);
    const gateRows = rows.filter(([code]) => code! in GATE_ERROR_CODES);
    expect(gateRows).toEqual(Object.entries(GATE_ERROR_CODES));
  });

  it('carry the code, field, value and expectation, and are recognised by isGateError', () => {
    const e = new GateError('SLUICE_E_FIELD_BOUND', 'a.b', 7, 'an integer from 0 to 5');
    expect([e.code, e.field, e.value, e.expected, e.message]).toEqual([
      'SLUICE_E_FIELD_BOUND',
      'a.b',
      7,
      'an integer from 0 to 5',
      'a.b: 7 is invalid: expected an integer from 0 to 5',
    ]);
    expect(isGateError(e)).toBe(true);
    expect(isGateError(new Error('x'))).toBe(false);
  });
});
