import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_PROFILES, EmulatorOptionError, type RunningEmulator, startEmulator } from './emulator.js';
import { chat, http, postJson } from './test/helpers.js';

let emu: RunningEmulator;

beforeAll(async () => {
  // Mean service 5 engine ms at time scale 10: answers within a few real ms.
  emu = await startEmulator({
    profile: 'exponential',
    maxNumSeqs: 2,
    meanServiceMs: 5,
    timeScale: 10,
    engineIndex: 3,
    seed: 7,
  });
});
afterAll(() => emu.close());

describe('the exponential profile (the engine catalogue, no server of its own)', () => {
  it('is one of the emulator profiles', () => {
    expect(EMULATOR_PROFILES).toContain('exponential');
  });

  it('answers a chat completion as the model "exponential" and counts it done', async () => {
    const r = await postJson(emu.url, '/v1/chat/completions', chat(3));
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('exponential');
    expect(emu.model).toBe('exponential');
    expect(emu.stats().completed).toBe(1);
  });

  it('labels its /metrics with its pool index', async () => {
    const r = await http(emu.url, 'GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/engine="3"/);
  });

  it('refuses a mean service time that is not a positive number of ms, before listening', async () => {
    await expect(startEmulator({ profile: 'exponential', meanServiceMs: 0 })).rejects.toThrow(
      EmulatorOptionError,
    );
    await expect(startEmulator({ profile: 'exponential', meanServiceMs: 0 })).rejects.toThrow(
      /mean-service-ms: 0/,
    );
    await expect(startEmulator({ engineIndex: -1 })).rejects.toThrow(/engine-index: -1/);
  });
});
