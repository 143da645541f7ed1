/**
 * The spec's client-visible contract over real loopback sockets: ceilings,
 * refusals (status, body, headers, keep/close), the bounded queue, queue
 * timeouts, HTTP/2 streams refused on their own stream, SSE relay and TTFT,
 * admission headers on admitted responses, non-inference bypass, keep-alive
 * connections gated per request.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  expectSettled,
  freePort,
  infer,
  inferH2,
  metricSum,
  rule,
  sleep,
  startProxy,
  TestBackend,
} from './helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
let b2: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  b2 = await new TestBackend('b2').start();
  p = await startProxy();
});

afterAll(async () => {
  await p.close();
  await b1.stop();
  await b2.stop();
});

const settled = (): Promise<void> => expectSettled(p);

const json = (body: string): Record<string, unknown> => JSON.parse(body) as Record<string, unknown>;

describe('ceilings and refusals', () => {
  test('the spec example scaled down: pool 4, endpoint 2, depth 4: 12 at once → 8 served, 4 refused 429', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        {
          fc_mode: 'enforce',
          fc_max_outstanding: 4,
          fc_ep_max_inflight: 2,
          fc_max_queue_depth: 4,
          fc_max_queue_wait_ms: 5000,
        },
        [b1, b2],
      ),
    );
    b1.maxActive = 0;
    b2.maxActive = 0;
    const rs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => infer(port, { hold: 300, user: `u${i}` })),
    );
    const ok = rs.filter((r) => r.status === 200);
    const refused = rs.filter((r) => r.status === 429);
    expect(ok).toHaveLength(8);
    expect(refused).toHaveLength(4);
    expect(b1.maxActive).toBe(2);
    expect(b2.maxActive).toBe(2);
    // Refused at once: before the first admitted request (held 300 ms) came back. Relative, not a
    // wall-clock bound, so a loaded machine cannot fail it.
    const firstServed = Math.min(...ok.map((r) => r.ms));
    for (const r of refused) {
      expect(json(r.body)).toEqual({ error: 'admission_capacity', retry_after: 1, jitter_hint_ms: 500 });
      expect(r.headers['retry-after']).toBe('1');
      expect(r.headers['x-loxilb-admission-inflight']).toBe('4');
      expect(r.headers['x-loxilb-admission-queued']).toBe('4');
      expect(r.headers['x-loxilb-admission-limit']).toBe('4');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.ms).toBeLessThan(firstServed);
    }
    // The queued four were served in a second wave: each waited for a first-wave request's 300 ms
    // hold, then held 300 ms itself (lower bounds only: load can slow a wave, never speed it up).
    const served = ok.map((r) => r.ms).sort((a, b) => a - b);
    for (const ms of served.slice(4)) expect(ms).toBeGreaterThanOrEqual(595);
    const m = p.metricsText();
    const svc = `service="127.0.0.1:${port}"`;
    const dec = (reason: string) =>
      metricSum(
        m,
        'loxilb_ai_admission_decisions_total',
        (l) => l.includes(svc) && l.includes(`reason="${reason}"`),
      );
    expect(dec('admitted')).toBe(8);
    expect(dec('queued')).toBe(4);
    expect(dec('queue_full')).toBe(4);
    await settled();
  });

  test('no queue: over the ceiling is refused at once; a buffered-body 429 keeps the connection', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [b1]),
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const busy = infer(port, { hold: 400 });
    await sleep(100);
    const sockets = new Set<net.Socket>();
    const onRequest = (q: http.ClientRequest) => q.on('socket', (s) => sockets.add(s));
    const r1 = await infer(port, { agent, onRequest });
    const r2 = await infer(port, { agent, onRequest });
    expect(r1.status).toBe(429);
    expect(r2.status).toBe(429);
    expect(r1.headers.connection).toBe('keep-alive');
    expect(sockets.size).toBe(1);
    expect((await busy).status).toBe(200);
    // The same kept connection is gated again per request: now admitted.
    const r3 = await infer(port, { agent, onRequest, hold: 10 });
    expect(r3.status).toBe(200);
    expect(sockets.size).toBe(1);
    agent.destroy();
    await settled();
  });

  test('a streamed (chunked) body refused 429 closes the connection', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [b1]),
    );
    const busy = infer(port, { hold: 400 });
    await sleep(100);
    const r = await new Promise<{ status: number; conn: string | undefined }>((resolve) => {
      const q = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/completions',
          headers: { 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, conn: res.headers.connection }));
        },
      );
      q.write('{"model":');
      setTimeout(() => q.end('"m"}'), 50);
    });
    expect(r).toEqual({ status: 429, conn: 'close' });
    await busy;
    await settled();
  });

  test('a waiter past fc_max_queue_wait_ms gets 504 admission_queue_timeout with queued_ms, closed', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 2, fc_max_queue_wait_ms: 300 },
        [b1],
      ),
    );
    const busy = infer(port, { hold: 1800 });
    await sleep(50);
    const r = await infer(port, { hold: 10 });
    expect(r.status).toBe(504);
    const body = json(r.body);
    expect(body.error).toBe('admission_queue_timeout');
    expect(body.queued_ms as number).toBeGreaterThanOrEqual(300);
    expect(body.queued_ms as number).toBeLessThan(1500);
    expect(r.headers.connection).toBe('close');
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(r.headers['x-loxilb-admission-limit']).toBeDefined();
    expect((await busy).status).toBe(200);
    await settled();
  });

  test('the queue is FIFO: waiters are served in arrival order', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 8, fc_max_queue_wait_ms: 5000 },
        [b2],
      ),
    );
    b2.receipts = [];
    const first = infer(port, { hold: 150, user: 'w0' });
    await sleep(30);
    const rest: Promise<unknown>[] = [];
    for (let i = 1; i <= 4; i++) {
      rest.push(infer(port, { hold: 20, user: `w${i}` }));
      await sleep(15);
    }
    await Promise.all([first, ...rest]);
    expect(b2.receipts).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
    await settled();
  });
});

describe('HTTP/2 (h2c prior knowledge)', () => {
  test('streams are gated one by one; over the ceiling a stream is refused 429 on its own stream', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 2, fc_max_queue_depth: 8, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const s = http2.connect(`http://127.0.0.1:${port}`);
    const rs = await Promise.all([
      inferH2(s, { hold: 300 }),
      inferH2(s, { hold: 300 }),
      inferH2(s, { hold: 300 }),
    ]);
    const statuses = rs.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    const refused = rs.find((r) => r.status === 429)!;
    expect(json(refused.body).error).toBe('admission_capacity');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-loxilb-admission-inflight']).toBe('2');
    // The session survives the refusal and serves the next stream.
    const again = await inferH2(s, { hold: 10, stream: true });
    expect(again.status).toBe(200);
    expect(again.body).toContain('data: [DONE]');
    s.close();
    await settled();
  });
});

describe('admitted responses', () => {
  test('SSE is relayed chunk by chunk; fc_expose_headers replaces the backend headers; TTFT is recorded', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 3, fc_expose_headers: 'on' }, [b1]),
    );
    const r = await infer(port, { hold: 400, stream: true });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.firstChunkMs!).toBeLessThan(250);
    expect(r.ms).toBeGreaterThanOrEqual(400);
    expect(r.headers['x-loxilb-admission-limit']).toBe('3');
    expect(r.headers['x-loxilb-admission-inflight']).toBe('1');
    expect(r.headers['x-loxilb-admission-queued']).toBe('0');
    expect(r.body.split('data: ').length).toBe(5);
    const j = await infer(port, { hold: 10 });
    expect(j.headers['x-loxilb-admission-limit']).toBe('3');
    // Over h2 as well.
    const s = http2.connect(`http://127.0.0.1:${port}`);
    const h = await inferH2(s, { hold: 10, stream: true });
    expect(h.headers['x-loxilb-admission-limit']).toBe('3');
    s.close();
    await settled();
  });

  test('without fc_expose_headers the backend headers pass untouched', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 3 }, [b1]),
    );
    const r = await infer(port, { hold: 10 });
    expect(r.headers['x-loxilb-admission-limit']).toBe('999');
    expect(r.headers['x-loxilb-admission-inflight']).toBeUndefined();
    await settled();
  });

  test('non-inference paths bypass the ceilings and are counted bypass_non_inference', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [b1]),
    );
    const busy = infer(port, { hold: 300 });
    await sleep(50);
    const m = await infer(port, { method: 'GET', path: '/v1/models' });
    expect(m.status).toBe(200);
    expect(json(m.body).object).toBe('list');
    await busy;
    const text = p.metricsText();
    expect(
      metricSum(
        text,
        'loxilb_ai_admission_decisions_total',
        (l) => l.includes(`127.0.0.1:${port}`) && l.includes('reason="bypass_non_inference"'),
      ),
    ).toBe(1);
    await settled();
  });

  test('observe mode admits everything and counts what enforce would have done', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'observe', fc_max_outstanding: 1 }, [b1]),
    );
    const rs = await Promise.all([
      infer(port, { hold: 200 }),
      infer(port, { hold: 200 }),
      infer(port, { hold: 200 }),
    ]);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
    const text = p.metricsText();
    expect(
      metricSum(
        text,
        'loxilb_ai_admission_decisions_total',
        (l) => l.includes(`127.0.0.1:${port}`) && l.includes('reason="observe_would_shed"'),
      ),
    ).toBe(2);
    await settled();
  });

  test('a rule that is not an AI-gateway service is proxied ungated', async () => {
    const port = await addRule(p, rule(await freePort(), {}, [b1, b2], { sse_mode: false }));
    const rs = await Promise.all(Array.from({ length: 6 }, () => infer(port, { hold: 50 })));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(new Set(rs.map((r) => r.headers['x-backend']))).toEqual(new Set(['b1', 'b2']));
  });
});
