/**
 * The backend leg over real sockets: what is forwarded both ways
 * (hop-by-hop headers dropped, X-Forwarded-For set, Host the endpoint), a
 * buffered request sent once more when the endpoint drops a reused pooled
 * socket before answering, and backpressure from a client that does not
 * read (the endpoint is not drained faster than the client reads).
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  bulkBackend,
  expectSettled,
  freePort,
  infer,
  rule,
  sleep,
  startProxy,
  until,
} from './helpers.js';

let p: LoxiProxy;

beforeAll(async () => {
  p = await startProxy();
});

afterAll(async () => {
  await p.close();
});

async function listen(s: net.Server): Promise<number> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as net.AddressInfo).port;
}

async function close(s: net.Server): Promise<void> {
  (s as http.Server).closeAllConnections?.();
  await new Promise<void>((r) => s.close(() => r()));
}

const bypassRule = async (backendPort: number) =>
  addRule(p, rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [{ port: backendPort }]));

describe('backend leg', () => {
  test('hop-by-hop headers are dropped both ways; Host is the endpoint; X-Forwarded-For is the client', async () => {
    const echo = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, [
          'Content-Type',
          'application/json',
          'Connection',
          'keep-alive, X-Hop',
          'X-Hop',
          'gone',
          'Proxy-Authenticate',
          'Basic',
          'X-Keep',
          'kept',
          'Set-Cookie',
          'a=1',
          'Set-Cookie',
          'b=2',
        ]);
        res.end(JSON.stringify(req.headers));
      });
    });
    const bp = await listen(echo);
    try {
      const port = await bypassRule(bp);
      const r = await infer(port, {
        headers: {
          Connection: 'keep-alive, X-Drop',
          'X-Drop': '1',
          'X-Forwarded-For': '203.0.113.9',
          TE: 'trailers',
          'Proxy-Authorization': 'Basic x',
          'X-End': 'e',
        },
      });
      expect(r.status).toBe(200);
      const seen = JSON.parse(r.body) as Record<string, string>;
      expect(seen.host).toBe(`127.0.0.1:${bp}`);
      expect(seen['x-forwarded-for']).toBe('127.0.0.1');
      expect(seen['x-end']).toBe('e');
      expect(seen['content-type']).toBe('application/json');
      expect(Number(seen['content-length'])).toBeGreaterThan(0);
      for (const h of ['x-drop', 'te', 'proxy-authorization']) expect(seen[h]).toBeUndefined();
      expect(r.headers['x-keep']).toBe('kept');
      expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(r.headers['x-hop']).toBeUndefined();
      expect(r.headers['proxy-authenticate']).toBeUndefined();
      await expectSettled(p);
    } finally {
      await close(echo);
    }
  });

  test('a buffered request on a reused socket that the endpoint drops before answering is sent once more', async () => {
    const ok = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
    let connections = 0;
    let requests = 0;
    const srv = net.createServer((s) => {
      connections++;
      let served = 0;
      s.on('data', (d) => {
        if (!d.includes('\r\n\r\n')) return;
        requests++;
        // The first connection answers one request, then drops the next one unanswered.
        if (connections === 1 && served === 1) {
          s.destroy();
          return;
        }
        served++;
        s.write(ok);
      });
      s.on('error', () => {});
    });
    const bp = await listen(srv);
    try {
      const port = await bypassRule(bp);
      expect((await infer(port)).status).toBe(200);
      const again = await infer(port);
      expect(again.status).toBe(200);
      expect(again.body).toBe('{}');
      expect(requests).toBe(3);
      expect(connections).toBe(2);
      await expectSettled(p);
    } finally {
      srv.close();
    }
  });

  test('a client that does not read holds the endpoint back (backpressure), then gets every byte', async () => {
    const total = 64 * 1024 * 1024;
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const bulk = bulkBackend(total, piece, {
      'content-type': 'application/octet-stream',
      'content-length': total,
    });
    const big = bulk.server;
    const bp = await listen(big);
    try {
      const port = await bypassRule(bp);
      let received = 0;
      let res: http.IncomingMessage | null = null;
      const req = http.request({ host: '127.0.0.1', port, path: '/v1/models', agent: false }, (r) => {
        res = r;
        r.pause();
      });
      req.end();
      expect(await until(() => res !== null)).toBe(true);
      await sleep(500);
      expect(bulk.finished).toBe(false);
      expect(bulk.written).toBeLessThan(total);
      const done = new Promise<void>((resolve) => {
        const r = res as unknown as http.IncomingMessage;
        r.on('data', (c: Buffer) => {
          received += c.length;
        });
        r.on('end', () => resolve());
        r.resume();
      });
      await done;
      expect(received).toBe(total);
      expect(bulk.finished).toBe(true);
      await expectSettled(p);
    } finally {
      await close(big);
    }
  });
});
