/**
 * h2 rapid reset: streams cancelled by the client right after their body
 * (RST_STREAM CANCEL) in a burst. Node may emit the response's finish/close
 * before the request's end; whatever the order, every permit is released
 * once, and in-flight and queued return to 0.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryDecisionLog } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import { SmgProxy } from '../../smg-proxy.js';
import {
  addRule,
  bookkeeping,
  expectSettled,
  freePort,
  inferH2,
  metricSum,
  rule,
  startProxy,
  TestBackend,
  until,
} from '../helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
const log = new MemoryDecisionLog();

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  p = await startProxy({ decisionLog: log });
});
afterAll(async () => {
  await p.close();
  await b1.stop();
});

/** Opens `n` streams on `session`, each cancelled `afterMs` after its body is sent (0: at once). */
function resetBurst(session: http2.ClientHttp2Session, n: number, holdMs = 20, afterMs = 0): Promise<void> {
  const body = JSON.stringify({ model: 'm', hold_ms: holdMs });
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
      if (afterMs === 0) s.close(http2.constants.NGHTTP2_CANCEL);
      else setTimeout(() => s.close(http2.constants.NGHTTP2_CANCEL), afterMs);
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
    // One record per exchange that reached the handler: the reset ones cancelled (or completed
    // when the answer won the race), the last one completed.
    const mine = log.records.filter((r) => r.service === `127.0.0.1:${port}`);
    expect(mine.length).toBeLessThanOrEqual(1_601);
    expect(mine.length).toBeGreaterThan(1);
    for (const r of mine.slice(0, -1)) expect(['cancelled', 'completed']).toContain(r.outcome);
    expect(mine.at(-1)).toMatchObject({ outcome: 'completed', status: 200, protocol: 'h2' });
  }, 30_000);

  test('streams reset while their backend legs run: the legs are cut and every unit comes back', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 64 }, [b1]),
    );
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const burst = resetBurst(session, 50, 5_000, 150);
    expect(await until(async () => (await bookkeeping(p)).inflight === 50, 5_000)).toBe(true);
    await burst;
    session.close();
    await expectSettled(p);
    expect(await until(() => b1.active === 0, 5_000)).toBe(true);
  }, 30_000);

  test('SMG: h2 streams reset while they wait in the queue leave it; the permits come back', async () => {
    const smg = new SmgProxy({
      settings: { max_concurrent_requests: 2, queue_size: 200, queue_timeout_secs: 30 },
      workerUrls: [`http://127.0.0.1:${b1.port}`],
      port: 0,
      env: {},
      monitor: { healthIntervalMs: 0 },
    });
    await smg.start();
    const gauge = (name: string) => metricSum(smg.metricsText(), name) ?? -1;
    try {
      const session = http2.connect(`http://127.0.0.1:${smg.port}`);
      session.on('error', () => {});
      const burst = resetBurst(session, 100, 1_000, 200);
      expect(await until(() => gauge('smg_admission_queue_depth') === 98, 5_000)).toBe(true);
      await burst;
      session.close();
      expect(
        await until(
          () => gauge('smg_admission_queue_depth') === 0 && gauge('smg_admission_inflight') === 0,
          5_000,
        ),
      ).toBe(true);
    } finally {
      await smg.close();
    }
  }, 30_000);
});
