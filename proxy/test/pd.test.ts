/**
 * P/D (disaggregated) rules: one service unit per request, a prefill leg
 * (max_tokens 1) then a decode leg carrying the original request; a leg
 * over its role ceiling is refused, never queued.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import { addRule, bookkeeping, freePort, infer, startProxy, until } from './helpers.js';

/** A backend that records the bodies it got and answers after `hold_ms`. */
class RoleBackend {
  bodies: Record<string, unknown>[] = [];
  port = 0;
  server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => {
      b += c;
    });
    req.on('end', () => {
      const j = JSON.parse(b || '{}') as Record<string, unknown>;
      this.bodies.push(j);
      const hold = this.role === 'prefill' ? Number(j.prefill_hold_ms ?? 0) : 10;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-role': this.role });
        res.end(
          JSON.stringify(
            this.role === 'prefill'
              ? { choices: [], kv_transfer_params: { remote_block_ids: [1, 2] } }
              : { choices: [{ message: { content: 'decoded' } }] },
          ),
        );
      }, hold);
    });
  });
  constructor(readonly role: 'prefill' | 'decode') {}
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

let p: LoxiProxy;
let pre: RoleBackend;
let dec: RoleBackend;

beforeAll(async () => {
  pre = await new RoleBackend('prefill').start();
  dec = await new RoleBackend('decode').start();
  p = await startProxy();
});
afterAll(async () => {
  await p.close();
  await pre.stop();
  await dec.stop();
});

describe('P/D requests', () => {
  test('prefill with max_tokens 1, then decode with the KV transfer parameters; a full prefill role refuses 429', async () => {
    const port = await freePort();
    await addRule(p, {
      serviceArguments: {
        externalIP: '127.0.0.1',
        port,
        protocol: 'tcp',
        mode: 4,
        pd_disagg_mode: true,
        fc_mode: 'enforce',
        fc_max_outstanding: 8,
        fc_prefill_max_inflight: 1,
        fc_decode_max_inflight: 4,
      },
      endpoints: [
        { endpointIP: '127.0.0.1', targetPort: pre.port, weight: 1, role: 'prefill' },
        { endpointIP: '127.0.0.1', targetPort: dec.port, weight: 1, role: 'decode' },
      ],
    });
    const body = (hold: number) => JSON.stringify({ model: 'm', max_tokens: 50, prefill_hold_ms: hold });
    const r = await infer(port, { body: body(0) });
    expect(r.status).toBe(200);
    expect(r.headers['x-role']).toBe('decode');
    expect(pre.bodies[0]).toMatchObject({ max_tokens: 1, stream: false });
    expect(dec.bodies[0]).toMatchObject({ max_tokens: 50, kv_transfer_params: { remote_block_ids: [1, 2] } });
    const [a, b] = await Promise.all([infer(port, { body: body(300) }), infer(port, { body: body(300) })]);
    expect([a.status, b.status].sort()).toEqual([200, 429]);
    const refused = a.status === 429 ? a : b;
    expect(JSON.parse(refused.body).error).toBe('admission_capacity');
    expect(refused.headers['x-loxilb-admission-limit']).toBe('1');
    expect(await until(async () => (await bookkeeping(p)).inflight === 0)).toBe(true);
    expect((await bookkeeping(p)).anomalies).toBe(0);
  });
});
