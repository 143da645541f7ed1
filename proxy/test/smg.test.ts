/**
 * The SMG dialect behind the real proxy: permits held to the last byte of a
 * stream, the FIFO queue (HTTP/2 streams wait too), 429
 * admission_queue_full and 503 admission_queue_timeout in SMG's error
 * format, bypassed routes, and the smg_* metrics on /metrics.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SmgProxy } from '../smg-proxy.js';
import { infer, inferH2, metricSum, sleep, TestBackend, until } from './helpers.js';

let b1: TestBackend;
let b2: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('w1').start();
  b2 = await new TestBackend('w2').start();
});
afterAll(async () => {
  await b1.stop();
  await b2.stop();
});

async function smg(settings: ConstructorParameters<typeof SmgProxy>[0]['settings']): Promise<SmgProxy> {
  const p = new SmgProxy({
    settings,
    workerUrls: [`http://127.0.0.1:${b1.port}`, `http://127.0.0.1:${b2.port}`],
    port: 0,
    env: {},
    monitor: { healthIntervalMs: 0 },
  });
  await p.start();
  return p;
}

describe('SMG admission control', () => {
  test('cap 2, queue 1: a stream holds its permit to its last byte; the rest queue or get 429 admission_queue_full', async () => {
    const p = await smg({ max_concurrent_requests: 2, queue_size: 1, queue_timeout_secs: 5 });
    try {
      const rs = await Promise.all([
        infer(p.port, { stream: true, hold: 300 }),
        infer(p.port, { stream: true, hold: 300 }),
        infer(p.port, { hold: 10 }),
        infer(p.port, { hold: 10 }),
      ]);
      const statuses = rs.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 429]);
      const shed = rs.find((r) => r.status === 429)!;
      expect(shed.headers['x-smg-error-code']).toBe('admission_queue_full');
      expect(shed.headers['retry-after']).toBe('2');
      expect(JSON.parse(shed.body)).toEqual({
        error: {
          type: 'Too Many Requests',
          code: 'admission_queue_full',
          message: 'admission queue is full',
          param: null,
        },
      });
      // The queued one waited for a stream to finish.
      const queued = rs.filter(
        (r) => r.status === 200 && r.headers['content-type'] === 'application/json',
      )[0]!;
      expect(queued.ms).toBeGreaterThanOrEqual(280);
      const m = await infer(p.port, { method: 'GET', path: '/metrics' });
      expect(metricSum(m.body, 'smg_admission_inflight')).toBe(0);
      expect(metricSum(m.body, 'smg_admission_queue_depth')).toBe(0);
      expect(metricSum(m.body, 'smg_admission_queue_rejected_total', (l) => l.includes('full'))).toBe(1);
      expect(metricSum(m.body, 'smg_http_rate_limit_total', (l) => l.includes('allowed'))).toBe(3);
      expect(metricSum(m.body, 'smg_http_rate_limit_total', (l) => l.includes('rejected'))).toBe(1);
    } finally {
      await p.close();
    }
  });

  test('a waiter past --queue-timeout-secs gets 503 admission_queue_timeout; HTTP/2 streams wait too', async () => {
    const p = await smg({ max_concurrent_requests: 1, queue_size: 4, queue_timeout_secs: 1 });
    try {
      const busy = infer(p.port, { hold: 1600 });
      await sleep(50);
      const s = http2.connect(`http://127.0.0.1:${p.port}`);
      const [h1, h2] = await Promise.all([infer(p.port, { hold: 1 }), inferH2(s, { hold: 1 })]);
      for (const r of [h1, h2]) {
        expect(r.status).toBe(503);
        expect(r.headers['x-smg-error-code']).toBe('admission_queue_timeout');
        expect(JSON.parse(r.body).error.code).toBe('admission_queue_timeout');
        expect(r.ms).toBeGreaterThanOrEqual(950);
      }
      expect((await busy).status).toBe(200);
      // An h2 stream over the cap now waits and is served.
      const long = infer(p.port, { hold: 200 });
      await sleep(30);
      const waited = await inferH2(s, { hold: 1 });
      expect(waited.status).toBe(200);
      expect(waited.ms).toBeGreaterThanOrEqual(150);
      await long;
      s.close();
      expect(await until(() => p.smg.pool.inflight === 0)).toBe(true);
      expect(p.smg.anomalies).toMatchObject({ underflow: 0, unknown_permit: 0 });
    } finally {
      await p.close();
    }
  });

  test('non-inference routes bypass; workers are used in turn; off when the cap is <= 0', async () => {
    const p = await smg({ max_concurrent_requests: -1 });
    try {
      const rs = await Promise.all(Array.from({ length: 6 }, () => infer(p.port, { hold: 50 })));
      expect(rs.every((r) => r.status === 200)).toBe(true);
      expect(new Set(rs.map((r) => r.headers['x-backend']))).toEqual(new Set(['w1', 'w2']));
      expect((await infer(p.port, { method: 'GET', path: '/v1/models' })).status).toBe(200);
    } finally {
      await p.close();
    }
  });
});
