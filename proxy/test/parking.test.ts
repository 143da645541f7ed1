/**
 * Parking at scale and the accept valve: 5,000 HTTP/1.1 requests parked on
 * one pool (no backend connection, no unit held), then let through by a
 * replace; a parked streamed body delivered whole once granted; the
 * LLB_PD_MAX_TOTAL_INFLIGHT valve holding connections at its bound.
 */
import { execSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  addRule,
  admin,
  bookkeeping,
  freePort,
  infer,
  metricSum,
  rule,
  sleep,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

let b1: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
});
afterAll(async () => {
  await b1.stop();
});

function fdLimit(): number {
  try {
    return Number(execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim()) || 1024;
  } catch {
    return 1024;
  }
}

function backendConnections(): Promise<number> {
  return new Promise((r) => b1.server.getConnections((_e, n) => r(n)));
}

describe('parking', () => {
  // Each parked request costs two descriptors in this process (client and server side).
  const N = Math.min(5000, Math.floor((fdLimit() - 500) / 2));

  test(`${N} parked connections hold no backend connection and no unit, and are all served`, async () => {
    const p = await startProxy();
    try {
      const port = await addRule(
        p,
        rule(
          await freePort(),
          {
            fc_mode: 'enforce',
            fc_max_outstanding: 1,
            fc_max_queue_depth: 65536,
            fc_max_queue_wait_ms: 60_000,
          },
          [b1],
        ),
      );
      let busyReq: http.ClientRequest | undefined;
      const busy = infer(port, { hold: 60_000, onRequest: (q) => (busyReq = q) });
      await sleep(50);
      const t0 = Date.now();
      const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
      const replies: Promise<{ status: number }>[] = [];
      for (let i = 0; i < N; i++) {
        replies.push(infer(port, { hold: 0, agent }));
        if (i % 500 === 499) await sleep(10);
      }
      expect(await until(async () => (await bookkeeping(p)).queued === N, 20_000)).toBe(true);
      expect((await bookkeeping(p)).inflight).toBeLessThanOrEqual(1);
      const parkedMs = Date.now() - t0;
      expect(await backendConnections()).toBeLessThanOrEqual(2);
      // Let them through, 256 at a time.
      const r = await admin(
        p.adminPort,
        'POST',
        '/netlox/v1/config/loadbalancer',
        rule(port, { fc_max_outstanding: 256 }, [b1]),
      );
      expect(r.status).toBe(200);
      const done = await Promise.all(replies);
      expect(done.filter((x) => x.status === 200).length).toBe(N);
      process.stdout.write(
        `parked ${N} in ${parkedMs} ms, all served ${Date.now() - t0} ms after the first\n`,
      );
      busyReq?.destroy();
      await busy;
      agent.destroy();
      expect(await until(async () => (await bookkeeping(p)).inflight === 0, 5000)).toBe(true);
      expect((await bookkeeping(p)).anomalies).toBe(0);
    } finally {
      await p.close();
    }
  }, 60_000);

  test('a parked streamed body is left unread and delivered whole once granted', async () => {
    const p = await startProxy({ limits: { bufferBodyBytes: 16 } });
    try {
      const port = await addRule(
        p,
        rule(
          await freePort(),
          { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5000 },
          [b1],
        ),
      );
      const busy = infer(port, { hold: 300 });
      await sleep(50);
      b1.receipts = [];
      const body = JSON.stringify({ user: 'streamed', hold_ms: 1, pad: 'x'.repeat(200_000) });
      const r = await infer(port, { body });
      expect(r.status).toBe(200);
      expect(b1.receipts).toEqual(['streamed']);
      await busy;
      expect((await bookkeeping(p)).anomalies).toBe(0);
    } finally {
      await p.close();
    }
  });
});

describe('accept valve (LLB_PD_MAX_TOTAL_INFLIGHT)', () => {
  test('at the bound new connections wait unread; a released context lets the oldest in', async () => {
    const p = await startProxy({ env: { LLB_PD_MAX_TOTAL_INFLIGHT: '3' } });
    try {
      const port = await addRule(
        p,
        rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 100 }, [b1]),
      );
      // Two idle client connections and one busy request (a client and a backend context).
      const idle = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
      await sleep(100);
      const first = infer(port, { hold: 10 });
      const blocked = infer(port, { hold: 10 });
      await sleep(200);
      const m = p.metricsText();
      expect(metricSum(m, 'loxilb_proxy_accept_bound')).toBe(3);
      expect(metricSum(m, 'loxilb_proxy_context_inflight')).toBe(3);
      expect(metricSum(m, 'loxilb_proxy_accept_blocked_total')).toBe(1);
      for (const s of idle) s.destroy();
      const rs = await Promise.all([first, blocked]);
      expect(rs.map((x) => x.status)).toEqual([200, 200]);
      expect(await until(() => p.valve.inflight <= 1, 3000)).toBe(true);
    } finally {
      await p.close();
    }
  });
});
