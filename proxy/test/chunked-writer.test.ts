/**
 * The direct chunk writer (`chunked-writer.ts`): the exact framing on the
 * wire, when it steps aside for `res.write`, and, through the proxy, a
 * chunked streamed response relayed with it: keep-alive reuse of the client
 * connection afterwards, backpressure from a client that does not read, and
 * a client leaving mid-stream.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COPY_LIMIT_BYTES, directSocket, writeFramedChunk } from '../chunked-writer.js';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  bookkeeping,
  bulkBackend,
  expectSettled,
  freePort,
  rule,
  sleep,
  startProxy,
  until,
} from './helpers.js';

async function listen(s: net.Server): Promise<number> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as net.AddressInfo).port;
}

async function close(s: http.Server): Promise<void> {
  s.closeAllConnections();
  await new Promise<void>((r) => s.close(() => r()));
}

/**
 * Sends each request on one raw connection once the bytes so far satisfy the
 * previous step's condition, and collects the bytes until the last one holds.
 */
async function raw(port: number, steps: [request: string, done: (b: Buffer) => boolean][]): Promise<Buffer> {
  const s = net.connect(port, '127.0.0.1');
  const got: Buffer[] = [];
  s.on('data', (c: Buffer) => got.push(c));
  let ok = true;
  for (const [request, done] of steps) {
    s.write(request);
    ok &&= await until(() => done(Buffer.concat(got)), 5_000);
  }
  s.destroy();
  expect(ok).toBe(true);
  return Buffer.concat(got);
}

const ends = (tail: string) => (b: Buffer) => b.toString('latin1').endsWith(tail);
const hasHead = (b: Buffer) => b.toString('latin1').includes('\r\n\r\n');

/** Splits a chunked body (after the head) into its chunks; throws on bad framing. */
function dechunk(body: Buffer): { chunks: Buffer[]; rest: Buffer } {
  const chunks: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', i);
    if (eol < 0) throw new Error('no chunk size line');
    const n = Number.parseInt(body.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(n)) throw new Error('bad chunk size');
    const start = eol + 2;
    if (body.subarray(start + n, start + n + 2).toString('latin1') !== '\r\n')
      throw new Error('no CRLF after data');
    i = start + n + 2;
    if (n === 0) return { chunks, rest: body.subarray(i) };
    chunks.push(body.subarray(start, start + n));
  }
}

const GET = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

describe('direct chunk writer (node:http server)', () => {
  const sizes = [1, 15, 16, 255, 256, 4095, COPY_LIMIT_BYTES, COPY_LIMIT_BYTES + 1, 100_000];
  let srv: http.Server;
  let port = 0;
  const seen: string[] = [];

  beforeAll(async () => {
    srv = http.createServer((req, res) => {
      if (req.url === '/direct') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        seen.push(`before head: ${directSocket(res) === null}`);
        res.write('first;');
        const s = directSocket(res);
        seen.push(`after head: ${s !== null}`);
        for (const n of sizes) writeFramedChunk(s!, Buffer.alloc(n, 0x61 + (n % 26)));
        writeFramedChunk(s!, Buffer.alloc(0));
        res.end();
      } else if (req.url === '/length') {
        res.writeHead(200, { 'content-length': 4 });
        res.write('ab');
        seen.push(`content-length: ${directSocket(res) === null}`);
        res.end('cd');
      } else if (req.url === '/empty') {
        res.writeHead(204);
        res.write('');
        seen.push(`204: ${directSocket(res) === null}`);
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('x');
        seen.push(`${req.method}: ${directSocket(res) === null}`);
        res.end();
      }
    });
    port = await listen(srv);
  });

  afterAll(async () => {
    await close(srv);
  });

  test('frames every size exactly (hex length, CRLF, data, CRLF), skips empty chunks, and the connection is reused', async () => {
    const b = await raw(port, [
      [GET('/direct'), ends('0\r\n\r\n')],
      [GET('/next'), ends('1\r\nx\r\n0\r\n\r\n')],
    ]);
    const text = b.toString('latin1');
    const headEnd = text.indexOf('\r\n\r\n') + 4;
    expect(text.slice(0, headEnd)).toContain('Transfer-Encoding: chunked');
    const { chunks, rest } = dechunk(b.subarray(headEnd));
    expect(chunks[0]!.toString()).toBe('first;');
    expect(chunks.slice(1).map((c) => c.length)).toEqual(sizes);
    for (const [k, c] of chunks.slice(1).entries())
      expect(c.equals(Buffer.alloc(sizes[k]!, 0x61 + (sizes[k]! % 26)))).toBe(true);
    // The second request on the same connection got its own, whole response.
    expect(rest.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n1\r\nx\r\n0\r\n\r\n$/);
    expect(seen).toContain('before head: true');
    expect(seen).toContain('after head: true');
    expect(seen).toContain('GET: false');
  });

  test('steps aside for a Content-Length body, a 204, a HEAD request', async () => {
    seen.length = 0;
    await raw(port, [[GET('/length'), ends('abcd')]]);
    await raw(port, [[GET('/empty'), hasHead]]);
    await raw(port, [['HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n', hasHead]]);
    expect(seen).toEqual(['content-length: true', '204: true', 'HEAD: true']);
  });

  test('a pipelined response waiting for its socket is not written directly', async () => {
    seen.length = 0;
    // The first response is slow: the second one is built before it owns the socket.
    const slow = http.createServer((req, res) => {
      if (req.url === '/slow') {
        setTimeout(() => res.end('slow'), 100);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('y');
      seen.push(`pipelined: ${directSocket(res) === null}`);
      res.end();
    });
    const sp = await listen(slow);
    try {
      const b = await raw(sp, [[GET('/slow') + GET('/fast'), ends('1\r\ny\r\n0\r\n\r\n')]]);
      expect(b.toString('latin1').indexOf('slow')).toBeLessThan(
        b.toString('latin1').lastIndexOf('1\r\ny\r\n'),
      );
      expect(seen).toEqual(['pipelined: true']);
    } finally {
      await close(slow);
    }
  });
});

describe('direct chunk writer through the proxy', () => {
  let p: LoxiProxy;

  beforeAll(async () => {
    p = await startProxy();
  });

  afterAll(async () => {
    await p.close();
  });

  const ruleFor = async (backendPort: number) =>
    addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [{ port: backendPort }]),
    );

  test('a chunked SSE stream arrives whole, and the client connection carries the next request', async () => {
    const events = Array.from({ length: 50 }, (_, i) => `data: {"i":${i},"pad":"${'z'.repeat(i * 7)}"}\n\n`);
    const sse = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const t = setInterval(() => {
        if (i < events.length) res.write(events[i++]);
        else {
          clearInterval(t);
          res.end('data: {"usage":{"prompt_tokens":3,"completion_tokens":50}}\n\ndata: [DONE]\n\n');
        }
      }, 1);
    });
    const bp = await listen(sse);
    try {
      const port = await ruleFor(bp);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const sockets = new Set<net.Socket>();
      const get = (): Promise<string> =>
        new Promise((resolve, reject) => {
          const req = http.request(
            { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent },
            (res) => {
              sockets.add(res.socket);
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => {
                body += c;
              });
              res.on('end', () => resolve(body));
            },
          );
          req.on('error', reject);
          req.setHeader('content-type', 'application/json');
          req.end('{"stream":true}');
        });
      const want = `${events.join('')}data: {"usage":{"prompt_tokens":3,"completion_tokens":50}}\n\ndata: [DONE]\n\n`;
      expect(await get()).toBe(want);
      expect(await get()).toBe(want);
      expect(sockets.size).toBe(1);
      agent.destroy();
      await expectSettled(p);
    } finally {
      await close(sse);
    }
  });

  test('a client that does not read a chunked stream holds the endpoint back, then gets every byte', async () => {
    const total = 48 * 1024 * 1024;
    const piece = Buffer.alloc(1000, 0x62); // below COPY_LIMIT_BYTES: the copying path
    const bulk = bulkBackend(total, piece, { 'content-type': 'text/event-stream' });
    const big = bulk.server;
    const bp = await listen(big);
    try {
      const port = await ruleFor(bp);
      let res: http.IncomingMessage | null = null;
      const req = http.request(
        { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent: false },
        (r) => {
          res = r;
          r.pause();
        },
      );
      req.end('{}');
      expect(await until(() => res !== null)).toBe(true);
      await sleep(500);
      expect(bulk.finished).toBe(false);
      expect(bulk.written).toBeLessThan(total);
      let received = 0;
      await new Promise<void>((resolve) => {
        const r = res as unknown as http.IncomingMessage;
        r.on('data', (c: Buffer) => {
          received += c.length;
        });
        r.on('end', () => resolve());
        r.resume();
      });
      expect(received).toBe(Math.ceil(total / piece.length) * piece.length);
      expect(bulk.finished).toBe(true);
      await expectSettled(p);
    } finally {
      await close(big);
    }
  });

  test('a client leaving mid-stream cuts the backend request and releases its unit', async () => {
    let backendClosed = false;
    let sent = 0;
    const sse = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => {
        sent++;
        res.write(`data: {"n":${sent}}\n\n`);
      }, 5);
      res.on('close', () => {
        clearInterval(t);
        backendClosed = true;
      });
    });
    const bp = await listen(sse);
    try {
      const port = await ruleFor(bp);
      const s = net.connect(port, '127.0.0.1');
      let got = '';
      s.on('data', (c: Buffer) => {
        got += c.toString('latin1');
      });
      s.write(
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      );
      expect(await until(() => (got.match(/data: /g) ?? []).length >= 5)).toBe(true);
      expect((await bookkeeping(p)).inflight).toBe(1);
      s.destroy();
      expect(await until(() => backendClosed)).toBe(true);
      await expectSettled(p);
      // What arrived before the cut was framed correctly.
      const body = Buffer.from(got.slice(got.indexOf('\r\n\r\n') + 4), 'latin1');
      const lines = body.toString('latin1').split('\r\n');
      for (let i = 0; i + 1 < lines.length; i += 2) {
        if (lines[i] === '' || lines[i + 1] === undefined) break;
        if (i + 2 >= lines.length) break; // the last chunk may be cut
        expect(Number.parseInt(lines[i]!, 16)).toBe(Buffer.byteLength(lines[i + 1]!, 'latin1'));
      }
    } finally {
      await close(sse);
    }
  });
});
