/**
 * The spec's table, "HTTP/1.1, streamed body (large or chunked): queued
 * when the pool has a depth; the connection closes after the answer either
 * way". A request parked with its body unread, once its turn comes and its
 * answer is relayed, carries `Connection: close` and the proxy closes the
 * socket. A queued request whose body was read first keeps its connection.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  bookkeeping,
  expectSettled,
  freePort,
  infer,
  rule,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

let p: LoxiProxy;
let b1: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  p = await startProxy({ limits: { bufferBodyBytes: 64 } });
});
afterAll(async () => {
  await p.close();
  await b1.stop();
});

const queuedRule = async () =>
  addRule(
    p,
    rule(
      await freePort(),
      { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 10_000 },
      [b1],
    ),
  );

/** Sends `head` + `body` on a raw socket; resolves with what came back and whether the server ended the socket. */
function rawExchange(
  port: number,
  head: string,
  body: string,
): Promise<{ text: string; serverEnded: boolean; socket: net.Socket }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let text = '';
    let serverEnded = false;
    s.setEncoding('utf8');
    s.on('error', () => {});
    s.on('data', (c: string) => {
      text += c;
    });
    s.on('end', () => {
      serverEnded = true;
      resolve({ text, serverEnded, socket: s });
    });
    s.write(head);
    s.write(body);
    // Resolves on the server's FIN, or once a whole answer is in while the socket stays open.
    const check = setInterval(() => {
      if (answerComplete(text) && !serverEnded) {
        clearInterval(check);
        setTimeout(() => resolve({ text, serverEnded, socket: s }), 200);
      }
    }, 20);
    s.on('close', () => clearInterval(check));
  });
}

/** Whether `text` holds a whole HTTP/1.1 response (Content-Length or chunked). */
function answerComplete(text: string): boolean {
  const at = text.indexOf('\r\n\r\n');
  if (at < 0) return false;
  const head = text.slice(0, at);
  const body = text.slice(at + 4);
  const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (cl) return Buffer.byteLength(body) >= Number(cl[1]);
  return body.endsWith('0\r\n\r\n');
}

describe('a queued request with a streamed body', () => {
  test('chunked: queued, then admitted; the answer carries Connection: close and the server closes the socket', async () => {
    const port = await queuedRule();
    const busy = infer(port, { hold: 300 });
    expect(await until(async () => (await bookkeeping(p)).inflight === 1)).toBe(true);
    const body = JSON.stringify({ model: 'm', hold_ms: 1, user: 'chunked' });
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const r = rawExchange(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      chunked,
    );
    expect(await until(async () => (await bookkeeping(p)).queued === 1)).toBe(true);
    expect((await busy).status).toBe(200);
    const { text, serverEnded, socket } = await r;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(serverEnded).toBe(true);
    await expectSettled(p);
  });

  test('a Content-Length body over --buffer-body-bytes: the connection closes after the answer too', async () => {
    const port = await queuedRule();
    const busy = infer(port, { hold: 300 });
    expect(await until(async () => (await bookkeeping(p)).inflight === 1)).toBe(true);
    const body = JSON.stringify({ model: 'm', hold_ms: 1, pad: 'x'.repeat(200) });
    const r = rawExchange(
      port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(await until(async () => (await bookkeeping(p)).queued === 1)).toBe(true);
    await busy;
    const { text, serverEnded, socket } = await r;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(serverEnded).toBe(true);
    await expectSettled(p);
  });

  test('a queued request whose body was read first keeps its connection', async () => {
    const port = await queuedRule();
    const busy = infer(port, { hold: 300 });
    expect(await until(async () => (await bookkeeping(p)).inflight === 1)).toBe(true);
    const body = JSON.stringify({ hold_ms: 1 });
    const r = rawExchange(
      port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(await until(async () => (await bookkeeping(p)).queued === 1)).toBe(true);
    await busy;
    const { text, socket } = await r;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/\r\nConnection: keep-alive\r\n/i);
    await expectSettled(p);
  });
});
