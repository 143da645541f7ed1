import { afterEach, describe, expect, it } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from './emulator.js';
import { FaultError } from './faults.js';
import { chat, http, postJson, streamSse, waitFor } from './test/helpers.js';

const running: RunningEmulator[] = [];
async function start(o: EmulatorOptions = {}): Promise<RunningEmulator> {
  const e = await startEmulator({ profile: 'fixed', fixed: { ttftMs: 5, itlMs: 2 }, ...o });
  running.push(e);
  return e;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function statuses(e: RunningEmulator, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await postJson(e.url, '/v1/chat/completions', chat(1))).status);
  return out;
}

describe('fault injection', () => {
  it('reads and changes faults through /admin/faults, and DELETE clears them', async () => {
    const e = await start();
    const set = await postJson(e.url, '/admin/faults', { error_rate: 0.25, health: 'down' });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ error_rate: 0.25, health: 'down', slowdown: 1 });
    expect(JSON.parse((await http(e.url, 'GET', '/admin/faults')).text).error_rate).toBe(0.25);
    expect(e.faults().health).toBe('down');
    const cleared = await http(e.url, 'DELETE', '/admin/faults');
    expect(JSON.parse(cleared.text)).toMatchObject({ error_rate: 0, health: 'up' });
  });

  it('answers 400 naming the field, value and expectation for invalid fault settings', async () => {
    const e = await start();
    const r = await postJson(e.url, '/admin/faults', { error_status: 200 });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({
      message: 'error_status: 200 is not an integer from 400 to 599',
      param: 'error_status',
      code: 400,
    });
    const unknown = await postJson(e.url, '/admin/faults', { stal_ms: 5 });
    expect(unknown.json.error.message).toMatch(/^stal_ms: unknown field; expected one of/);
    const bad = await http(e.url, 'POST', '/admin/faults', undefined, '{');
    expect(bad.status).toBe(400);
    expect(e.faults().errorStatus).toBe(500);
    expect(() => e.setFaults({ slowdown: -1 })).toThrow(FaultError);
  });

  it('injects errors at error_rate with error_status, in the OpenAI shape', async () => {
    const e = await start({ faults: { errorRate: 1, errorStatus: 503 } });
    const r = await postJson(e.url, '/v1/chat/completions', chat(1));
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ type: 'ServiceUnavailableError', code: 503 });
    e.setFaults({ errorRate: 0 });
    expect((await postJson(e.url, '/v1/chat/completions', chat(1))).status).toBe(200);
    expect(e.stats().injectedErrors).toBe(1);
  });

  it('draws errors from a seeded stream: the same seed gives the same sequence', async () => {
    const faults = { errorRate: 0.5, errorStatus: 429 };
    const a = await statuses(await start({ seed: 7, faults }), 24);
    const b = await statuses(await start({ seed: 7, faults }), 24);
    const c = await statuses(await start({ seed: 8, faults }), 24);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const errors = a.filter((s) => s === 429).length;
    expect(errors).toBeGreaterThan(2);
    expect(errors).toBeLessThan(22);
  });

  it('takes /metrics down and /health down and back up', async () => {
    const e = await start({ faults: { metricsOutage: true, health: 'down' } });
    expect((await http(e.url, 'GET', '/metrics')).status).toBe(503);
    expect((await http(e.url, 'GET', '/health')).status).toBe(503);
    await postJson(e.url, '/admin/faults', { metrics_outage: false, health: 'up' });
    expect((await http(e.url, 'GET', '/metrics')).status).toBe(200);
    expect((await http(e.url, 'GET', '/health')).status).toBe(200);
  });

  it('slows the engine down by the slowdown factor', async () => {
    const e = await start({ fixed: { ttftMs: 40, itlMs: 0 } });
    const normal = await streamSse(e.url, '/v1/chat/completions', chat(1, { stream: true }));
    e.setFaults({ slowdown: 5 });
    const slow = await streamSse(e.url, '/v1/chat/completions', chat(1, { stream: true }));
    expect(slow.events[0]?.atMs).toBeGreaterThanOrEqual(190);
    expect(slow.events[0]?.atMs as number).toBeGreaterThan((normal.events[0]?.atMs as number) + 100);
  });

  it('stalls a stream for stall_ms after stall_after_tokens tokens', async () => {
    const e = await start({ faults: { stallMs: 200, stallAfterTokens: 2 } });
    const r = await streamSse(e.url, '/v1/chat/completions', chat(5, { stream: true }));
    // Events: role, token 1, token 2 | stall | token 3, 4, 5, [DONE].
    const at = r.events.map((x) => x.atMs);
    expect(r.events).toHaveLength(7);
    expect((at[3] as number) - (at[2] as number)).toBeGreaterThanOrEqual(180);
    expect((at[2] as number) - (at[0] as number)).toBeLessThan(150);
    expect(e.stats().stalled).toBe(1);
    // Non-streaming responses are held the same way.
    const t0 = performance.now();
    expect((await postJson(e.url, '/v1/completions', { prompt: 'x', max_tokens: 3 })).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(180);
  });

  it('frees a stalled stream whose client goes away', async () => {
    const e = await start({ faults: { stallMs: 5000, stallAfterTokens: 1 } });
    const r = streamSse(e.url, '/v1/chat/completions', chat(50, { stream: true }), (ev, req) => {
      if (ev.data.includes('"content"')) req.destroy();
    });
    await r;
    await waitFor(() => e.stats().active === 0 && e.stats().running === 0);
    expect(e.stats().disconnected).toBe(1);
  });
});

describe('startEmulator options', () => {
  it('rejects invalid options before listening, naming the option', async () => {
    await expect(startEmulator({ timeScale: 0 })).rejects.toThrow(/^time-scale: 0 is not a number/);
    await expect(startEmulator({ profile: 'gpt-5' })).rejects.toThrow(
      /^profile: "gpt-5" is not one of fixed, llama/,
    );
    await expect(startEmulator({ faults: { errorRate: 3 } })).rejects.toThrow(/^error_rate: 3/);
  });
});
