/**
 * h2 rapid reset: streams cancelled by the client right after their body
 * (RST_STREAM CANCEL) in a burst. Node may emit the response's finish/close
 * before the request's end; whatever the order, every permit is released
 * once, and in-flight and queued return to 0.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import {
  addRule,
  bookkeeping,
  expectSettled,
  freePort,
  inferH2,
  rule,
  startProxy,
  TestBackend,
  until,
} from '../helpers.js';

let p: LoxiProxy;
let b1: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  p = await startProxy();
});
afterAll(async () => {
  await p.close();
  await b1.stop();
});

/** Opens `n` streams on `session`, each cancelled right after its body is sent. */
function resetBurst(session: http2.ClientHttp2Session, n: number): Promise<void> {
  const body = JSON.stringify({ model: 'm', hold_ms: 20 });
  let left = n;
  return new Promise((resolve) => {
    for (let i = 0; i < n; i++) {
      const s = session.request({
        ':method': 'POST',
        ':path': '/v1/chat/completions',
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      });
      s.on('error', () => {});
      s.on('close', () => {
        if (--left === 0) resolve();
      });
      s.end(body);
      s.close(http2.constants.NGHTTP2_CANCEL);
    }
  });
}

describe('h2 rapid reset', () => {
  test('streams reset right after their body release every permit; in-flight and queued return to 0', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 64 }, [b1]),
    );
    for (let round = 0; round < 4; round++) {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => {});
      await resetBurst(session, 400);
      session.close();
    }
    expect(await until(async () => (await bookkeeping(p)).inflight === 0, 5_000)).toBe(true);
    await expectSettled(p);
    // The pool still has every unit: a fresh session gets a normal answer.
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    try {
      expect((await inferH2(session, { hold: 1 })).status).toBe(200);
    } finally {
      session.close();
    }
  }, 30_000);
});
