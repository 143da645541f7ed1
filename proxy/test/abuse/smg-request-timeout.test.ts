/**
 * SMG's --request-timeout-secs against workers that stall: a request whose
 * worker never answers is ended 504 request_timeout (SMG's error format) once
 * the timeout has passed since it was sent, a stream that stalls after its
 * head is cut, and either way the permit goes back at once, so the next
 * waiter is served instead of being held behind a dead worker.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SmgProxy } from '../../smg-proxy.js';
import { infer, inferH2, metricSum, until } from '../helpers.js';

/** A worker that reads requests and never answers (with `head`, it sends a stream's head and one event, then stalls). */
class StalledWorker {
  readonly server: net.Server;
  readonly sockets = new Set<net.Socket>();
  port = 0;
  constructor(head: boolean) {
    this.server = net.createServer((s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {});
      let sent = false;
      s.on('data', () => {
        if (!head || sent) return;
        sent = true;
        const ev = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n';
        s.write(
          'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n' +
            `${Buffer.byteLength(ev).toString(16)}\r\n${ev}\r\n`,
        );
      });
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

let silent: StalledWorker;
let midStream: StalledWorker;
beforeAll(async () => {
  silent = await new StalledWorker(false).start();
  midStream = await new StalledWorker(true).start();
});
afterAll(async () => {
  await silent.stop();
  await midStream.stop();
});

async function smg(port: number, settings: ConstructorParameters<typeof SmgProxy>[0]['settings']) {
  const p = new SmgProxy({
    settings,
    workerUrls: [`http://127.0.0.1:${port}`],
    port: 0,
    env: {},
    monitor: { healthIntervalMs: 0 },
    requestTimeoutSecs: 1,
  });
  await p.start();
  return p;
}

describe('SMG --request-timeout-secs', () => {
  test('a worker that never answers: 504 request_timeout after the timeout, the permit released, and the next waiter timed from its own turn', async () => {
    const p = await smg(silent.port, { max_concurrent_requests: 1, queue_size: 2, queue_timeout_secs: 30 });
    try {
      const [a, b] = await Promise.all([infer(p.port, { hold: 1 }), infer(p.port, { hold: 1 })]);
      for (const r of [a, b]) {
        expect(r.status).toBe(504);
        expect(r.headers['x-smg-error-code']).toBe('request_timeout');
        expect(JSON.parse(r.body)).toEqual({
          error: {
            type: 'Gateway Timeout',
            code: 'request_timeout',
            message: 'the worker did not answer within 1 s',
            param: null,
          },
        });
      }
      const [first, second] = a.ms <= b.ms ? [a, b] : [b, a];
      expect(first.ms).toBeGreaterThanOrEqual(950);
      // The waiter got the permit the stalled request gave back, then had its own second.
      expect(second.ms).toBeGreaterThanOrEqual(first.ms + 900);
      expect(await until(() => p.smg.pool.inflight === 0)).toBe(true);
      expect(p.deadlines.expired).toBe(2);
      const m = await infer(p.port, { method: 'GET', path: '/metrics' });
      expect(
        metricSum(m.body, 'smg_http_responses_total', (l) =>
          l.includes('status_code="504",error_code="request_timeout"'),
        ),
      ).toBe(2);
      expect(metricSum(m.body, 'smg_admission_inflight')).toBe(0);
    } finally {
      await p.close();
    }
  }, 15_000);

  test('a stream that stalls after its head is cut at the timeout and its permit released', async () => {
    const p = await smg(midStream.port, { max_concurrent_requests: 1, queue_size: 0 });
    try {
      const r = await infer(p.port, { stream: true, hold: 1 });
      expect(r.status).toBe(200);
      expect(r.body).toContain('"hi"');
      expect(r.ms).toBeGreaterThanOrEqual(950);
      // The response never ended properly: the stream was cut.
      expect(r.body).not.toContain('[DONE]');
      expect(await until(() => p.smg.pool.inflight === 0)).toBe(true);
      expect(p.smg.anomalies).toMatchObject({ underflow: 0, unknown_permit: 0 });
      // The permit is free again: the next request is admitted, not shed 429.
      const again = infer(p.port, { stream: true, hold: 1 });
      expect(await until(() => p.smg.pool.inflight === 1)).toBe(true);
      expect((await again).status).toBe(200);
    } finally {
      await p.close();
    }
  }, 15_000);

  test("each timeout counts against the worker's circuit breaker: two in a row open it (breakerFailures 2)", async () => {
    const p = new SmgProxy({
      settings: { max_concurrent_requests: 4, queue_size: 0 },
      workerUrls: [`http://127.0.0.1:${silent.port}`],
      port: 0,
      env: {},
      monitor: { healthIntervalMs: 0, breakerFailures: 2, breakerOpenMs: 60_000 },
      requestTimeoutSecs: 1,
    });
    await p.start();
    const worker = `127.0.0.1:${silent.port}`;
    try {
      expect((await infer(p.port, { hold: 1 })).status).toBe(504);
      expect(p.monitor.usable('smg', worker)).toBe(true);
      expect((await infer(p.port, { hold: 1 })).status).toBe(504);
      expect(p.monitor.usable('smg', worker)).toBe(false);
      // With its only worker out, the next request is not sent to it to wait another second.
      const r = await infer(p.port, { hold: 1 });
      expect(r.status).not.toBe(504);
      expect(r.ms).toBeLessThan(900);
    } finally {
      await p.close();
    }
  }, 15_000);

  test('with admission off the timeout still ends a stalled request', async () => {
    const p = await smg(silent.port, {});
    try {
      const r = await infer(p.port, { hold: 1 });
      expect(r.status).toBe(504);
      expect(r.headers['x-smg-error-code']).toBe('request_timeout');
      expect(p.http.inflight).toBe(0);
    } finally {
      await p.close();
    }
  }, 15_000);

  test('an HTTP/2 stream to a worker that never answers gets the 504 too, and its session stays usable', async () => {
    const p = await smg(silent.port, { max_concurrent_requests: 2, queue_size: 0 });
    const session = http2.connect(`http://127.0.0.1:${p.port}`);
    try {
      const r = await inferH2(session, { hold: 1 });
      expect(r.status).toBe(504);
      expect(r.headers['x-smg-error-code']).toBe('request_timeout');
      expect(JSON.parse(r.body).error.code).toBe('request_timeout');
      expect(await until(() => p.smg.pool.inflight === 0)).toBe(true);
      const status = await new Promise<number>((resolve) => {
        const q = session.request({ ':method': 'GET', ':path': '/metrics' });
        q.on('response', (h) => resolve(Number(h[':status'])));
        q.on('error', () => resolve(0));
        q.resume();
        q.end();
      });
      expect(status).toBe(200);
    } finally {
      session.close();
      await p.close();
    }
  }, 15_000);
});
