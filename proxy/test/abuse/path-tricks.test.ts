/**
 * Path tricks on a credentialed, gated rule: every spelling of an inference
 * route (absolute form, doubled slashes, dot segments, escaped unreserved
 * characters, a case variant) needs the credential and counts against the
 * ceiling, the backend receives the normalised target, and a malformed
 * percent-escape is a 400. Requests go out on raw sockets so the exact
 * request line reaches the proxy.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, freePort, infer, inferH2, rule, startProxy, TestBackend, until } from '../helpers.js';
import { rawRequest } from './raw.js';

let p: LoxiProxy;
let b: TestBackend;
let port: number;

const KEY = 'sk-path';
const body = (hold: number): string => JSON.stringify({ model: 'm', hold_ms: hold });
const post = (target: string, auth: boolean, hold = 1) =>
  rawRequest(
    port,
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json${auth ? `\r\nAuthorization: Bearer ${KEY}` : ''}`,
    body(hold),
  );

/** Each trick and the target the backend must receive for it. */
const TRICKS: [string, string][] = [
  ['http://h/v1/chat/completions', '/v1/chat/completions'],
  ['//v1/chat/completions', '/v1/chat/completions'],
  ['/v1//chat///completions', '/v1/chat/completions'],
  ['/x/../v1/chat/completions', '/v1/chat/completions'],
  ['/v1/./chat/completions?stream=false', '/v1/chat/completions?stream=false'],
  ['/%76%31/chat/completions', '/v1/chat/completions'],
  ['/x/%2e%2E/v1/chat/completions', '/v1/chat/completions'],
  ['/V1/chat/completions', '/V1/chat/completions'],
  ['/v1%2fchat/completions', '/v1%2Fchat/completions'],
  ['/v1/chat/completions/', '/v1/chat/completions/'],
  ['/v1/audio/transcriptions', '/v1/audio/transcriptions'],
];

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy({ credentials: { apiKeys: new Map([[KEY, 'tenant-a']]) } });
  port = await addRule(
    p,
    rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 0 }, [b], {
      api_key_auth: 'apikey-or-jwt',
    }),
  );
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

describe('path tricks', () => {
  test.each(TRICKS)('%s without a credential is 401 and never reaches the backend', async (target) => {
    const before = b.urls.length;
    const r = await post(target, false);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).error.code).toBe('unauthorized');
    expect(b.urls.length).toBe(before);
  });

  test('every trick with a valid credential is refused 429 while the ceiling is full', async () => {
    const holder = infer(port, { hold: 800, headers: { authorization: `Bearer ${KEY}` } });
    expect(await until(() => b.active === 1)).toBe(true);
    for (const [target] of TRICKS) {
      const r = await post(target, true);
      expect(r.status, target).toBe(429);
    }
    expect((await holder).status).toBe(200);
  });

  test('the backend receives the normalised target', async () => {
    await until(() => b.active === 0);
    for (const [target, forwarded] of TRICKS) {
      b.urls.length = 0;
      const r = await post(target, true);
      expect(r.status, target).toBe(200);
      expect(b.urls, target).toEqual([forwarded]);
    }
  });

  test('on h2c the same tricks in :path need the credential, and the backend receives the normalised path', async () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      // The absolute form has no h2 spelling (:path is a path), so it is left out.
      for (const [target, forwarded] of TRICKS.filter(([t]) => t.startsWith('/'))) {
        expect((await inferH2(session, { hold: 1, path: target })).status, target).toBe(401);
        b.urls.length = 0;
        const ok = await inferH2(session, {
          hold: 1,
          path: target,
          headers: { authorization: `Bearer ${KEY}` },
        });
        expect(ok.status, target).toBe(200);
        expect(b.urls, target).toEqual([forwarded]);
      }
    } finally {
      session.close();
    }
  });

  test('a malformed percent-escape is 400 invalid_request_target before the credential and the gate', async () => {
    for (const target of ['/v1/chat/completions%', '/v1/chat%2/completions', '/v1/chat/completions?q=%zz']) {
      const before = b.urls.length;
      const r = await post(target, false);
      expect(r.status, target).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('invalid_request_target');
      expect(b.urls.length).toBe(before);
    }
  });

  test('health probes need no credential and bypass; the model listing needs one; unknown paths need one', async () => {
    const get = (target: string) => rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1`);
    expect((await get('/health')).status).toBe(200);
    expect((await get('/x/../health')).status).toBe(200);
    expect((await get('/v1/models')).status).toBe(401);
    expect((await get('/V1/models')).status).toBe(401);
    expect((await get('/whatever')).status).toBe(401);
  });
});
