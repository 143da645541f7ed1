/**
 * Client connections and bodies that would otherwise stay open for good,
 * with small configured bounds: a connection that sends nothing, a partial
 * h2c preface (many of them), an idle h2c session, HEADERS without
 * END_HEADERS, a request body that stalls (buffered, streamed, h2), and the
 * process-wide bound on body bytes read before the decision.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryDecisionLog } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import {
  addRule,
  expectSettled,
  freePort,
  infer,
  inferH2,
  rule,
  startProxy,
  TestBackend,
  until,
} from '../helpers.js';
import { rawClient } from './raw-backend.js';

const log = new MemoryDecisionLog();
let p: LoxiProxy;
let b: TestBackend;
let port: number;

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy({
    decisionLog: log,
    limits: {
      headersTimeoutMs: 300,
      keepAliveTimeoutMs: 300,
      checkIntervalMs: 100,
      bodyTimeoutMs: 300,
      bufferBodyBytes: 4096,
    },
  });
  port = await addRule(p, rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b]));
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

describe('connections', () => {
  test('a connection that sends nothing is closed after the head time limit', async () => {
    expect((await rawClient(port, '')).closed).toBe(true);
  });

  test('partial h2c prefaces are closed after the head time limit, every one of them', async () => {
    const seen = await Promise.all(Array.from({ length: 50 }, () => rawClient(port, PREFACE.slice(0, 10))));
    expect(seen.every((s) => s.closed)).toBe(true);
  });

  test('an h2c session without an open stream is closed (GOAWAY) after the keep-alive idle time', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => {});
    const closed = new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), 5_000);
      s.once('close', () => {
        clearTimeout(t);
        resolve(true);
      });
    });
    const st = s.request({ ':method': 'GET', ':path': '/v1/models' });
    st.resume();
    const status = await new Promise<number>((r) => st.on('response', (h) => r(Number(h[':status']))));
    expect(status).toBe(200);
    expect(await closed).toBe(true);
    s.destroy();
    expect(p.counters.faults.idle_timeout).toBeGreaterThanOrEqual(1);
  });

  test('an h2c stream that outlasts the keep-alive idle time keeps its session open', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => {});
    try {
      // Streams for 1 s on a session whose idle limit is 300 ms.
      const r = await inferH2(s, { stream: true, hold: 1_000 });
      expect(r.status).toBe(200);
      expect(r.body).toContain('[DONE]');
      expect(r.error).toBeUndefined();
    } finally {
      s.destroy();
    }
  });

  test('HEADERS without END_HEADERS (no CONTINUATION ever) is closed', async () => {
    const payload = Buffer.concat([
      Buffer.from(PREFACE, 'latin1'),
      frame(0x4, 0, 0, Buffer.alloc(0)),
      // :method GET (HPACK static index 2), END_STREAM but no END_HEADERS.
      frame(0x1, 0x1, 1, Buffer.from([0x82])),
    ]);
    expect((await rawClient(port, payload)).closed).toBe(true);
  });
});

describe('request bodies', () => {
  test('a buffered body that stalls mid-way is answered 408 body_timeout and closed; it never reaches the backend', async () => {
    b.receipts = [];
    const r = await rawClient(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user":"stall"',
    );
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1.1 408/);
    expect(r.text).toContain('"error":"body_timeout"');
    expect(b.receipts).toEqual([]);
    expect(
      await until(() => log.records.some((x) => x.reason === 'body_timeout' && x.decision === 'rejected')),
    ).toBe(true);
    expect(p.bodyBudget.used).toBe(0);
    await expectSettled(p);
  });

  test('a streamed body that stalls after admission: 408 body_timeout, the unit returns', async () => {
    const r = await rawClient(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"use\r\n',
    );
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1.1 408/);
    await expectSettled(p);
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });

  test('an h2 body that stalls is answered 408 body_timeout on its stream', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => {});
    try {
      const st = s.request({
        ':method': 'POST',
        ':path': '/v1/chat/completions',
        'content-type': 'application/json',
        'content-length': '1000',
      });
      st.write('{"user":');
      let body = '';
      st.setEncoding('utf8');
      st.on('data', (c: string) => {
        body += c;
      });
      const status = await new Promise<number>((r) => {
        const t = setTimeout(() => r(0), 5_000);
        st.on('response', (h) => {
          clearTimeout(t);
          r(Number(h[':status']));
        });
      });
      expect(status).toBe(408);
      await until(() => body.length > 0, 2_000);
      expect(body).toContain('body_timeout');
    } finally {
      s.destroy();
    }
    await expectSettled(p);
  });
});

describe('body memory', () => {
  let q: LoxiProxy;
  let qport: number;

  beforeAll(async () => {
    q = await startProxy({
      limits: { bodyTimeoutMs: 20_000, bufferBodyBytes: 4096, bodyMemoryBytes: 6000 },
    });
    qport = await addRule(q, rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b]));
  });

  afterAll(async () => {
    await q.close();
  });

  test('bodies being read past the process-wide bound are refused 503 proxy_body_memory_full; the bytes come back', async () => {
    const head =
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{';
    // The first stalls holding 4000 bytes (closed here after 1 s); the second would pass 6000.
    const first = rawClient(qport, head, 1_000);
    expect(await until(() => q.bodyBudget.used === 4000)).toBe(true);
    const second = await rawClient(qport, head);
    expect(second.closed).toBe(true);
    expect(second.text).toMatch(/^HTTP\/1.1 503/);
    expect(second.text).toContain('"error":"proxy_body_memory_full"');
    expect((await first).closed).toBe(false);
    expect(await until(() => q.bodyBudget.used === 0)).toBe(true);
    expect((await infer(qport, { hold: 1 })).status).toBe(200);
  });
});
