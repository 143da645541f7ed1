/**
 * JWTs on the wire, verified asynchronously by jose: the audience and
 * issuer when configured, a token without exp refused, each with its clear
 * 401 reason in OpenAI's error shape; the body of a request whose token is
 * being verified is neither lost nor reordered on a keep-alive connection.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signHs256 } from '../../../loadgen/driver/jwt-sign.js';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, expectSettled, freePort, infer, rule, startProxy, TestBackend } from '../helpers.js';

const secret = Buffer.from('jwt-claims-secret');
let p: LoxiProxy;
let b: TestBackend;
let port: number;
const exp = (): number => Math.floor(Date.now() / 1000) + 600;
const good = (extra: Record<string, unknown> = {}) =>
  signHs256({ sub: 'tenant-j', aud: 'sluice', iss: 'https://idp.example', exp: exp(), ...extra }, secret);
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy({
    credentials: { jwt: { hsSecret: secret, audience: 'sluice', issuer: 'https://idp.example' } },
  });
  port = await addRule(
    p,
    rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b], { api_key_auth: 'jwt' }),
  );
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

describe('JWT claims on the wire', () => {
  test('a wrong audience or issuer, or no exp, is 401 with the reason; a good token is admitted', async () => {
    for (const [token, why] of [
      [good({ aud: 'other' }), 'audience'],
      [good({ iss: 'https://evil.example' }), 'issuer'],
      [signHs256({ sub: 't', aud: 'sluice', iss: 'https://idp.example' }, secret), 'no_exp'],
      [good({ exp: Math.floor(Date.now() / 1000) - 600 }), 'expired'],
    ] as const) {
      const r = await infer(port, { hold: 1, headers: bearer(token) });
      expect(r.status, why).toBe(401);
      expect(JSON.parse(r.body)).toEqual({
        error: {
          message: `invalid token (${why})`,
          type: 'invalid_request_error',
          param: null,
          code: 'unauthorized',
        },
      });
    }
    expect((await infer(port, { hold: 1, headers: bearer(good()) })).status).toBe(200);
    await expectSettled(p);
  });

  test('bodies survive the verification, in order, on one keep-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      b.receipts.length = 0;
      const users = ['u-1', 'u-2', 'u-3', 'u-4'];
      const replies = await Promise.all(
        users.map((user) => infer(port, { hold: 1, user, agent, headers: bearer(good()) })),
      );
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(b.receipts).toEqual(users);
    } finally {
      agent.destroy();
    }
    await expectSettled(p);
  });
});
