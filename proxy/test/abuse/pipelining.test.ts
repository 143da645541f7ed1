/**
 * HTTP/1.1 pipelining and a client that leaves: Node queues the responses of
 * pipelined requests behind the first, and those never emit close or finish
 * when the socket closes. Every exchange is tied to its socket's close, so
 * the units and queue places of all of them come back.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import {
  addRule,
  bookkeeping,
  expectSettled,
  freePort,
  infer,
  rule,
  sleep,
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

function pipelined(n: number, holdMs: number): string {
  const body = JSON.stringify({ model: 'm', hold_ms: holdMs });
  const one = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return one.repeat(n);
}

/** Writes `n` pipelined requests on a raw socket, waits until `ready`, then destroys the socket. */
async function pipelineAndLeave(port: number, n: number, ready: () => Promise<boolean>): Promise<void> {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => {});
  await new Promise<void>((r) => s.once('connect', () => r()));
  s.write(pipelined(n, 2_000));
  expect(await until(ready, 5_000)).toBe(true);
  s.destroy();
}

describe('pipelining', () => {
  test('three pipelined requests, all admitted, then a disconnect: every unit comes back', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 8 }, [b1]),
    );
    await pipelineAndLeave(port, 3, async () => (await bookkeeping(p)).inflight === 3);
    await expectSettled(p);
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });

  test('twenty pipelined requests on one socket, then a disconnect: every unit back, no listener pile-up warning', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 32 }, [b1]),
    );
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    try {
      await pipelineAndLeave(port, 20, async () => (await bookkeeping(p)).inflight === 20);
      await expectSettled(p);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  test('three pipelined requests, one running and two queued, then a disconnect: the queue empties', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 10_000 },
        [b1],
      ),
    );
    await pipelineAndLeave(port, 3, async () => {
      const b = await bookkeeping(p);
      return b.inflight === 1 && b.queued === 2;
    });
    await expectSettled(p);
    // No turn was lost: the next request is served at once.
    await sleep(10);
    expect((await infer(port, { hold: 1 })).status).toBe(200);
  });
});
