/**
 * JSON nesting: a P/D rule parses its request body, and a 10 KB body of
 * nested arrays used to throw RangeError from JSON.stringify inside an
 * un-awaited promise, which ended the process. A body nested deeper than
 * the bound is refused 400 `json_too_deep` before it is parsed; the unit is
 * released and the next request is served.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, expectSettled, freePort, infer, startProxy, TestBackend } from '../helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
let b2: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  b2 = await new TestBackend('b2').start();
  p = await startProxy({ limits: { maxJsonDepth: 32 } });
});
afterAll(async () => {
  await p.close();
  await b1.stop();
  await b2.stop();
});

const pdRule = (port: number) => ({
  serviceArguments: {
    externalIP: '127.0.0.1',
    port,
    protocol: 'tcp',
    mode: 4,
    pd_disagg_mode: true,
    fc_mode: 'enforce',
    fc_max_outstanding: 4,
  },
  endpoints: [
    { endpointIP: '127.0.0.1', targetPort: b1.port, weight: 1, role: 'prefill' },
    { endpointIP: '127.0.0.1', targetPort: b2.port, weight: 1, role: 'decode' },
  ],
});

const nested = (depth: number): string => `{"model":"m","messages":${'['.repeat(depth)}${']'.repeat(depth)}}`;

describe('JSON nesting bound', () => {
  test('a P/D body of 5,000 nested arrays is refused 400 json_too_deep; the process keeps serving', async () => {
    const port = await addRule(p, pdRule(await freePort()));
    const r = await infer(port, { body: nested(5_000) });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: 'json_too_deep', max_depth: 32 });
    await expectSettled(p);
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });

  test('nesting up to the bound is accepted; brackets inside strings do not count', async () => {
    const port = await addRule(p, pdRule(await freePort()));
    // The outer object is level 1, the messages array level 2 ... the innermost array level 32.
    expect((await infer(port, { body: nested(31) })).status).toBe(200);
    expect((await infer(port, { body: nested(32) })).status).toBe(400);
    const quoted = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '['.repeat(1_000) }] });
    expect((await infer(port, { body: quoted })).status).toBe(200);
    await expectSettled(p);
  });
});
