/**
 * The SMG dialect behind the real proxy: permits held to the last byte of a
 * stream, the FIFO queue (HTTP/2 streams wait too), 429
 * admission_queue_full and 503 admission_queue_timeout in SMG's error
 * format, bypassed routes, and the smg_* metrics on /metrics.
 */
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parsePrometheusText } from '../prom-text.js';
import { SmgProxy } from '../smg-proxy.js';
import { freePort, infer, inferH2, metricSum, sleep, TestBackend, until } from './helpers.js';

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

  test('only the routes SMG names bypass: a case variant, an unknown route or an encoded slash waits for a permit like inference', async () => {
    const p = await smg({ max_concurrent_requests: 1, queue_size: 0 });
    try {
      const stream = infer(p.port, { stream: true, hold: 600 });
      expect(await until(() => p.smg.pool.inflight === 1)).toBe(true);
      for (const path of [
        '/V1/chat/completions',
        '/v1/Chat/Completions',
        '/v1/unknown',
        '/v1%2Fchat%2Fcompletions',
      ])
        expect({ path, status: (await infer(p.port, { path })).status }).toEqual({ path, status: 429 });
      for (const path of ['/health', '/readiness', '/v1/models', '/get_loads', '/workers/w1'])
        expect({ path, status: (await infer(p.port, { method: 'GET', path })).status }).toEqual({
          path,
          status: 200,
        });
      expect((await stream).status).toBe(200);
    } finally {
      await p.close();
    }
  });

  test('/metrics exports smg_http_responses_total{status_code,error_code} and smg_http_inflight_request_age_count{gt,le} in Prometheus text format', async () => {
    const p = await smg({ max_concurrent_requests: 1, queue_size: 0 });
    try {
      const stream = infer(p.port, { stream: true, hold: 600 });
      expect(await until(() => p.smg.pool.inflight === 1)).toBe(true);
      const shed = await infer(p.port, { hold: 1 });
      expect(shed.status).toBe(429);
      const during = parsePrometheusText((await infer(p.port, { method: 'GET', path: '/metrics' })).body);
      expect(during.badLines).toBe(0);
      expect(during.types.get('smg_http_responses_total')).toBe('counter');
      expect(during.types.get('smg_http_inflight_request_age_count')).toBe('gauge');
      const ages = during.samples.filter((x) => x.name === 'smg_http_inflight_request_age_count');
      expect(ages.map((x) => `${x.labels.gt}-${x.labels.le}`)).toEqual([
        '0-30',
        '30-60',
        '60-180',
        '180-300',
        '300-600',
        '600-1200',
        '1200-3600',
        '3600-7200',
        '7200-14400',
        '14400-28800',
        '28800-86400',
        '86400-+Inf',
      ]);
      // The stream is in flight (the scrape itself is not counted), in the first bucket.
      expect(ages.map((x) => x.value)).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
      const responses = during.samples.filter((x) => x.name === 'smg_http_responses_total');
      expect(responses).toEqual([
        {
          name: 'smg_http_responses_total',
          labels: { status_code: '429', error_code: 'admission_queue_full' },
          value: 1,
        },
      ]);
      expect((await stream).status).toBe(200);
      expect(await until(() => p.http.inflight === 0)).toBe(true);
      const after = parsePrometheusText((await infer(p.port, { method: 'GET', path: '/metrics' })).body);
      const total = (code: string, err: string): number | undefined =>
        after.samples.find(
          (x) =>
            x.name === 'smg_http_responses_total' &&
            x.labels.status_code === code &&
            x.labels.error_code === err,
        )?.value;
      expect(total('200', '')).toBe(1);
      expect(total('429', 'admission_queue_full')).toBe(1);
      expect(
        after.samples
          .filter((x) => x.name === 'smg_http_inflight_request_age_count')
          .reduce((a, x) => a + x.value, 0),
      ).toBe(0);
    } finally {
      await p.close();
    }
  });

  test('token bucket through the proxy: drained, a request is shed 429 and a waiter waits; the refill admits the waiter past the cap', async () => {
    // cap 2, one queue slot, 1 token/s; the streams hold their permits for the whole test.
    const p = await smg({
      max_concurrent_requests: 2,
      queue_size: 1,
      queue_timeout_secs: 10,
      rate_limit_tokens_per_second: 1,
    });
    try {
      const held = [infer(p.port, { stream: true, hold: 3000 }), infer(p.port, { stream: true, hold: 3000 })];
      expect(await until(() => p.smg.pool.inflight === 2)).toBe(true);
      const drainedAt = Date.now();
      // The waiter streams for a while once admitted, so that in-flight stays past the cap.
      const waiter = infer(p.port, { stream: true, hold: 1000 });
      expect(await until(() => p.smg.pool.queue.length === 1)).toBe(true);
      // The bucket is empty and the queue full: refused at once.
      const shed = await infer(p.port, { hold: 1 });
      expect(shed.status).toBe(429);
      expect(shed.headers['x-smg-error-code']).toBe('admission_queue_full');
      expect(Date.now() - drainedAt).toBeLessThan(900);
      // About a second after the drain, the refilled token goes to the waiter.
      expect(await until(() => p.smg.pool.inflight === 3)).toBe(true);
      expect(Date.now() - drainedAt).toBeGreaterThanOrEqual(850);
      expect((await waiter).status).toBe(200);
      const rs = await Promise.all(held);
      expect(rs.map((r) => r.status)).toEqual([200, 200]);
      const m = await infer(p.port, { method: 'GET', path: '/metrics' });
      expect(metricSum(m.body, 'smg_http_rate_limit_total', (l) => l.includes('allowed'))).toBe(3);
      expect(metricSum(m.body, 'smg_admission_queue_rejected_total', (l) => l.includes('full'))).toBe(1);
    } finally {
      await p.close();
    }
  }, 15_000);
});

describe('sluice proxy --smg', () => {
  const BIN = new URL('../../bin/sluice.js', import.meta.url).pathname;

  test('without --max-concurrent-requests runs with admission control off (SMG default -1); -5 is off too', async () => {
    for (const extra of [[], ['--max-concurrent-requests', '-5']]) {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        [
          BIN,
          'proxy',
          '--smg',
          '--worker-urls',
          `http://127.0.0.1:${b1.port}`,
          '--port',
          String(port),
          ...extra,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
      });
      child.stderr.on('data', (c) => {
        out += c;
      });
      const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        expect(await until(() => out.includes('listening on'), 20_000)).toBe(true);
        expect(out).toContain('admission control off');
        const rs = await Promise.all(Array.from({ length: 4 }, () => infer(port, { hold: 50 })));
        expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exit).toBe(0);
    }
  }, 60_000);
});
