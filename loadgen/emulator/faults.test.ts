import { describe, expect, it } from 'vitest';
import { checkFaults, FaultError, faultsToJson, NO_FAULTS, parseFaultsJson } from './faults.js';

describe('fault settings', () => {
  it('maps the admin JSON names to the fault fields', () => {
    expect(parseFaultsJson({ error_rate: 0.5, error_status: 503, health: 'down', stall_ms: 10 })).toEqual({
      errorRate: 0.5,
      errorStatus: 503,
      health: 'down',
      stallMs: 10,
    });
    expect(faultsToJson(NO_FAULTS)).toEqual({
      slowdown: 1,
      error_rate: 0,
      error_status: 500,
      metrics_outage: false,
      health: 'up',
      stall_ms: 0,
      stall_after_tokens: 1,
    });
  });

  it.each([
    [{ slowdown: 0 }, /^slowdown: 0 is not a number from 0.01 to 1000$/],
    [{ error_rate: 1.5 }, /^error_rate: 1.5 is not a number from 0 to 1$/],
    [{ error_status: 200 }, /^error_status: 200 is not an integer from 400 to 599$/],
    [{ error_status: '503' }, /^error_status: "503" is not an integer/],
    [{ metrics_outage: 'yes' }, /^metrics_outage: "yes" is not true or false$/],
    [{ health: 'sideways' }, /^health: "sideways" is not "up" or "down"$/],
    [{ stall_ms: -1 }, /^stall_ms: -1 is not/],
    [{ stall_after_tokens: 0.5 }, /^stall_after_tokens: 0.5 is not an integer/],
    [{ colour: 'red' }, /^colour: unknown field; expected one of slowdown, error_rate/],
    [[1], /^\(body\): expected a JSON object/],
  ])('rejects %j', (body, message) => {
    expect(() => parseFaultsJson(body)).toThrow(FaultError);
    expect(() => parseFaultsJson(body)).toThrow(message);
  });

  it('checks settings given in code under their JSON names', () => {
    expect(() => checkFaults({ errorRate: 2 })).toThrow(/^error_rate: 2 is not/);
    expect(checkFaults({ slowdown: 3 })).toEqual({ slowdown: 3 });
  });
});
