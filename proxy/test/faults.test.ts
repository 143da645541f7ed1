/**
 * Faults over real sockets: clients leaving while queued and while
 * streaming, a backend reset mid-stream, a backend down (502, then the
 * breaker takes it out: 503 admission_no_capacity), slowloris heads,
 * malformed HTTP, oversized bodies and heads. After each: in-flight 0,
 * anomalies 0, and the next request is admitted (no turn lost).
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryDecisionLog } from '../decision-log.js';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  bookkeeping,
  expectSettled,
  freePort,
  infer,
  metricSum,
  rule,
  sleep,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
const log = new MemoryDecisionLog();

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  p = await startProxy({
    decisionLog: log,
    limits: {
      headersTimeoutMs: 300,
      checkIntervalMs: 100,
      maxBodyBytes: 1024 * 1024,
      bufferBodyBytes: 64 * 1024,
    },
    monitor: { breakerFailures: 2, healthIntervalMs: 100, breakerOpenMs: 200 },
  });
});

afterAll(async () => {
  await p.close();
  await b1.stop();
});

const settled = (): Promise<void> => expectSettled(p);

const queuedRule = async (backends = [b1], depth = 4) =>
  addRule(
    p,
    rule(
      await freePort(),
      { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: depth, fc_max_queue_wait_ms: 5000 },
      backends,
    ),
  );

function raw(port: number, payload: string): Promise<{ text: string; closedMs: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (c) => {
      text += c;
    });
    s.on('close', () => resolve({ text, closedMs: Date.now() - t0 }));
    s.on('error', () => {});
    s.write(payload);
  });
}

describe('clients that go away', () => {
  test('a client leaving while queued gives up its place; the next waiter gets the turn', async () => {
    const port = await queuedRule();
    const busy = infer(port, { hold: 400 });
    await sleep(50);
    let leaver: http.ClientRequest | undefined;
    const left = infer(port, { hold: 10, user: 'leaver', onRequest: (q) => (leaver = q) });
    await sleep(50);
    const stayer = infer(port, { hold: 10, user: 'stayer' });
    await sleep(100);
    leaver!.destroy();
    expect((await left).status).toBe(0);
    expect(await until(async () => (await bookkeeping(p)).queued === 1)).toBe(true);
    const s = await stayer;
    expect(s.status).toBe(200);
    expect(b1.receipts).not.toContain('leaver');
    await busy;
    const text = p.metricsText();
    expect(
      metricSum(
        text,
        'loxilb_ai_admission_decisions_total',
        (l) => l.includes(`:${port}"`) && l.includes('reason="cancelled"'),
      ),
    ).toBe(1);
    await settled();
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });

  test('a client leaving mid-stream releases its unit and aborts the backend request', async () => {
    const port = await queuedRule();
    const before = b1.active;
    await new Promise<void>((resolve) => {
      const q = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false },
        (res) => {
          res.once('data', () => {
            q.destroy();
            resolve();
          });
        },
      );
      q.on('error', () => {});
      q.end(JSON.stringify({ stream: true, hold_ms: 5000 }));
    });
    expect(await until(() => b1.active === before, 2000)).toBe(true);
    await settled();
    expect((await infer(port, { hold: 1 })).status).toBe(200);
    const cancelled = () =>
      log.records.find((r) => r.service === `127.0.0.1:${port}` && r.outcome === 'cancelled');
    expect(await until(() => cancelled() !== undefined, 2000)).toBe(true);
    expect(cancelled()?.status).toBe(200);
  });

  test('clients leaving mid-stream, more often than the breaker threshold, do not take the endpoint out', async () => {
    const port = await queuedRule();
    for (let i = 0; i < 4; i++) {
      await new Promise<void>((resolve) => {
        const q = http.request(
          { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false },
          (res) => {
            res.once('data', () => {
              q.destroy();
              resolve();
            });
          },
        );
        q.on('error', () => {});
        q.end(JSON.stringify({ stream: true, hold_ms: 5000 }));
      });
      await settled();
    }
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });
});

describe('backend faults', () => {
  test('a backend reset mid-stream ends the client stream and releases the unit', async () => {
    const port = await queuedRule();
    const r = await infer(port, { stream: true, hold: 2000, resetMid: true });
    expect(r.status).toBe(200);
    expect(r.body).toContain('data:');
    expect(r.body).not.toContain('[DONE]');
    expect(r.error ?? 'truncated').toBeTruthy();
    await settled();
    const failed = () => log.records.find((x) => x.service === `127.0.0.1:${port}` && x.outcome === 'failed');
    expect(await until(() => failed() !== undefined, 2000)).toBe(true);
    const rec = failed();
    expect(rec?.reason).toBe('backend_error');
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });

  test('a backend down: 502, then its breaker takes it out (503 admission_no_capacity), then it returns', async () => {
    const deadPort = await freePort();
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [{ port: deadPort }]),
    );
    const r = await infer(port, { hold: 1 });
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body).error).toBe('backend_unavailable');
    const out = await until(async () => (await infer(port, { hold: 1 })).status === 503, 3000);
    expect(out).toBe(true);
    const n = await infer(port, { hold: 1 });
    expect(n.status).toBe(503);
    expect(JSON.parse(n.body).error).toBe('admission_no_capacity');
    expect(n.headers.connection).toBe('close');
    await settled();
    // The endpoint comes up: the probe closes the breaker.
    const back = await new TestBackend('back').start(deadPort);
    try {
      expect(await until(async () => (await infer(port, { hold: 1 })).status === 200, 3000)).toBe(true);
      const text = p.metricsText();
      expect(
        metricSum(
          text,
          'loxilb_ai_endpoint_breaker_transitions_total',
          (l) => l.includes(`:${port}"`) && l.includes('to="closed"'),
        ),
      ).toBe(1);
    } finally {
      await back.stop();
    }
    await settled();
  });
});

describe('hostile clients', () => {
  test('slowloris: a head not finished within headersTimeout is answered 408 and closed', async () => {
    const port = await queuedRule();
    const t0 = Date.now();
    const closed = await new Promise<{ text: string; ms: number }>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      let text = '';
      s.on('data', (c) => {
        text += c;
      });
      s.on('error', () => {});
      s.on('close', () => {
        clearInterval(drip);
        resolve({ text, ms: Date.now() - t0 });
      });
      s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
      const drip = setInterval(() => s.write('X-Slow: 1\r\n'), 50);
    });
    expect(closed.text).toMatch(/^HTTP\/1.1 408/);
    expect(closed.ms).toBeLessThan(2000);
    expect(p.counters.faults.headers_timeout).toBeGreaterThanOrEqual(1);
    await settled();
  });

  test('malformed HTTP is answered 400 and closed, before the gate', async () => {
    const port = await queuedRule();
    const r = await raw(port, 'GARBAGE /// HTTP/9.9\r\n\r\n');
    expect(r.text).toMatch(/^HTTP\/1.1 400/);
    const r2 = await raw(port, 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(r2.text).toMatch(/^HTTP\/1.1 400/);
    expect(p.counters.faults.malformed).toBeGreaterThanOrEqual(2);
    await settled();
  });

  test('an oversized head is 431; an oversized body is 413 and never reaches the backend', async () => {
    const port = await queuedRule();
    const big = await raw(port, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.text).toMatch(/^HTTP\/1.1 431/);
    b1.receipts = [];
    const r = await raw(
      port,
      `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"user":"big"`,
    );
    expect(r.text).toMatch(/^HTTP\/1.1 413/);
    expect(r.text).toContain('Connection: close');
    expect(b1.receipts).toEqual([]);
    // A chunked body that grows past the bound while streaming is cut off.
    const chunked = await new Promise<number>((resolve) => {
      const q = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/completions',
          agent: false,
          headers: { 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      q.on('error', () => resolve(0));
      const piece = Buffer.alloc(256 * 1024, 0x20);
      let n = 0;
      const pump = (): void => {
        while (n < 8) {
          n++;
          if (!q.write(piece)) {
            q.once('drain', pump);
            return;
          }
        }
        q.end();
      };
      pump();
    });
    expect([0, 413]).toContain(chunked);
    await settled();
  });
});
