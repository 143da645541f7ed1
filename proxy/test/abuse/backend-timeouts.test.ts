/**
 * Backends that hold a unit without answering: one that accepts and never
 * sends a head (504 backend_timeout), one that sends a head and a first
 * event and then stalls (the stream is cut), and an endpoint declared dead
 * by its health probes while a leg waits on it (the silent leg is cut, a
 * leg still streaming is not). After each the unit is back (in-flight 0).
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryDecisionLog } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import {
  addRule,
  bulkBackend,
  expectSettled,
  freePort,
  infer,
  rule,
  sleep,
  startProxy,
  until,
} from '../helpers.js';
import { chunk, type RawBackend, rawBackend, SSE_HEAD, silentBackend } from './raw-backend.js';

const log = new MemoryDecisionLog();
let p: LoxiProxy;
const backends: RawBackend[] = [];

beforeAll(async () => {
  p = await startProxy({
    decisionLog: log,
    backend: { headersTimeoutMs: 400, bodyIdleTimeoutMs: 400 },
  });
});

afterAll(async () => {
  await p.close();
  for (const b of backends) await b.close();
});

async function gatedRule(proxy: LoxiProxy, b: RawBackend): Promise<number> {
  backends.push(b);
  return addRule(proxy, rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [b]));
}

const recordOf = (port: number) => log.records.filter((r) => r.service === `127.0.0.1:${port}`);

describe('backend time limits', () => {
  test('a backend that accepts and never answers: 504 backend_timeout, and the unit returns', async () => {
    const port = await gatedRule(p, await silentBackend());
    const r = await infer(port);
    expect(r.status).toBe(504);
    expect(JSON.parse(r.body).error).toBe('backend_timeout');
    await expectSettled(p);
    // The unit came back: the next request is admitted (and times out the same way).
    expect((await infer(port)).status).toBe(504);
    await expectSettled(p);
    const recs = recordOf(port);
    expect(recs.map((x) => [x.outcome, x.reason, x.error, x.status])).toEqual([
      ['failed', 'backend_timeout', 'backend_timeout', 504],
      ['failed', 'backend_timeout', 'backend_timeout', 504],
    ]);
  });

  test('a streamed (chunked) request body to a backend that never answers: 504 backend_timeout once the body is sent', async () => {
    const port = await gatedRule(p, await silentBackend());
    const r = await new Promise<{ status: number; body: string }>((resolve) => {
      const q = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          agent: false,
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      q.on('error', () => resolve({ status: 0, body: '' }));
      q.write('{"model":');
      setTimeout(() => q.end('"m"}'), 100);
    });
    expect(r.status).toBe(504);
    expect(JSON.parse(r.body).error).toBe('backend_timeout');
    await expectSettled(p);
  });

  test('a backend that sends its head and a first event, then stalls: the stream is cut, the unit returns', async () => {
    const port = await gatedRule(
      p,
      await rawBackend((s) => s.write(SSE_HEAD + chunk('data: {"choices":[]}\n\n'))),
    );
    const r = await infer(port, { stream: true });
    expect(r.status).toBe(200);
    expect(r.body).toContain('data: {"choices":[]}');
    expect(r.error).toBeDefined();
    await expectSettled(p);
    expect(await until(() => recordOf(port).length === 1)).toBe(true);
    expect(recordOf(port)[0]).toMatchObject({ outcome: 'failed', reason: 'backend_timeout', status: 200 });
  });
});

test('a client that reads slowly does not trip the body time limit: the leg is paused, not silent', async () => {
  const total = 16 * 1024 * 1024;
  const bulk = bulkBackend(total, Buffer.alloc(64 * 1024, 0x61), {
    'content-type': 'application/octet-stream',
    'content-length': total,
  });
  await new Promise<void>((r) => bulk.server.listen(0, '127.0.0.1', r));
  const bp = (bulk.server.address() as net.AddressInfo).port;
  try {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [{ port: bp }]),
    );
    let res: http.IncomingMessage | null = null;
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/models', agent: false }, (r) => {
      res = r;
      r.pause();
    });
    req.on('error', () => {});
    req.end();
    expect(await until(() => res !== null)).toBe(true);
    // Three body time limits without reading.
    await sleep(1_200);
    const received = await new Promise<number>((resolve) => {
      const r = res as unknown as http.IncomingMessage;
      let n = 0;
      r.on('data', (c: Buffer) => {
        n += c.length;
      });
      r.on('end', () => resolve(n));
      r.on('error', () => resolve(n));
      r.resume();
    });
    expect(received).toBe(total);
    await expectSettled(p);
  } finally {
    bulk.server.closeAllConnections();
    await new Promise<void>((r) => bulk.server.close(() => r()));
  }
});

describe('an endpoint declared dead', () => {
  let q: LoxiProxy;
  const qlog = new MemoryDecisionLog();

  beforeAll(async () => {
    q = await startProxy({
      decisionLog: qlog,
      backend: { headersTimeoutMs: 60_000, bodyIdleTimeoutMs: 60_000 },
      monitor: { healthIntervalMs: 100, probeTimeoutMs: 200, breakerFailures: 2, breakerOpenMs: 60_000 },
    });
  });

  afterAll(async () => {
    await q.close();
  });

  test('its silent legs are cut when its breaker opens (502, reason endpoint_down), long before the head timeout', async () => {
    const port = await gatedRule(q, await silentBackend());
    const t0 = Date.now();
    const r = await infer(port);
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body).error).toBe('backend_unavailable');
    expect(Date.now() - t0).toBeLessThan(30_000);
    await expectSettled(q);
    const rec = qlog.records.find((x) => x.service === `127.0.0.1:${port}`);
    expect(rec).toMatchObject({ outcome: 'failed', reason: 'endpoint_down', status: 502 });
  });

  test('a leg still streaming when its endpoint is declared dead is left to finish', async () => {
    // /health never answers (probes time out); inference streams an event every 50 ms for ~1.5 s.
    const port = await gatedRule(
      q,
      await rawBackend((s, head) => {
        if (head.startsWith('GET /health')) return;
        s.write(SSE_HEAD);
        let n = 0;
        const t = setInterval(() => {
          if (s.destroyed) return clearInterval(t);
          if (++n <= 30) s.write(chunk(`data: {"n":${n}}\n\n`));
          else {
            clearInterval(t);
            s.write(chunk('data: [DONE]\n\n') + chunk(''));
          }
        }, 50);
      }),
    );
    const r = await infer(port, { stream: true });
    expect(r.status).toBe(200);
    expect(r.body).toContain('[DONE]');
    expect(r.error).toBeUndefined();
    // The breaker did open meanwhile.
    expect(
      await until(() => q.metricsText().includes(`endpoint="127.0.0.1:${backends.at(-1)!.port}"} 0`)),
    ).toBe(true);
    await expectSettled(q);
  });
});
