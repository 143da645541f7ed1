/**
 * With `--policy`, an inference body of unknown length (HTTP/1.1 chunked, HTTP/2 without
 * content-length, which h2 clients need not send) is read whole up to --buffer-body-bytes, its
 * bytes reserved in the body budget as they arrive, and then costed like any other; one that grows
 * past the bound, or is declared above it, is refused 413 `policy_body_unread` before any seat.
 * Every test ends with the body budget and the gate's bookkeeping back at zero.
 */
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientLimits, LoxiProxy } from '../../proxy.js';
import { addRule, expectSettled, freePort, rule, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(limits: Partial<ClientLimits> = {}) {
  const backend = await new RecordingBackend().start();
  const deferDb = join(mkdtempSync(join(tmpdir(), 'sluice-policy-len-')), 'defer.db');
  const proxy: LoxiProxy = await startProxy({
    policy: { text: PROXY_TEST_POLICY, fileName: 'policy.yaml', deferDb, drainPeriodMs: 20 },
    credentials: { apiKeys: new Map([['sk-a', 'tenant-a']]) },
    limits,
  });
  const port = await freePort();
  await addRule(
    proxy,
    rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend], { api_key_auth: 'required' }),
  );
  cleanups.push(async () => {
    await proxy.close();
    await backend.stop();
  });
  return { backend, proxy, port };
}

interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders;
}

/**
 * POSTs `parts` as an HTTP/1.1 chunked body, one write per part, `gapMs` apart; with a declared
 * `contentLength`, sends only the head with that Content-Length and no body.
 */
function h1Post(
  port: number,
  parts: string[],
  o: { gapMs?: number; contentLength?: number } = {},
): Promise<Reply> {
  const framing =
    o.contentLength === undefined
      ? { 'transfer-encoding': 'chunked' }
      : { 'content-length': String(o.contentLength) };
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json', ...framing },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '', headers: {} }));
    if (o.contentLength !== undefined) {
      req.flushHeaders();
      return;
    }
    let i = 0;
    const next = (): void => {
      if (i === parts.length) {
        req.end();
        return;
      }
      req.write(parts[i++]!);
      setTimeout(next, o.gapMs ?? 10);
    };
    next();
  });
}

/** Runs `fn` on an h2c session to `port`, closing the session afterwards. */
async function withSession(
  port: number,
  fn: (session: http2.ClientHttp2Session) => Promise<void>,
): Promise<void> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  try {
    await fn(session);
  } finally {
    session.close();
  }
}

/** POSTs `parts` on an h2 stream without content-length, one write per part, `gapMs` apart. */
function h2Post(session: http2.ClientHttp2Session, parts: string[], gapMs = 10): Promise<Reply> {
  return new Promise((resolve) => {
    const s = session.request({
      ':method': 'POST',
      ':path': '/v1/chat/completions',
      authorization: 'Bearer sk-a',
      'content-type': 'application/json',
    });
    let status = 0;
    let headers: http2.IncomingHttpHeaders = {};
    let body = '';
    s.on('response', (h) => {
      headers = h;
      status = Number(h[':status']);
    });
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      body += c;
    });
    s.on('error', () => {});
    s.on('close', () => resolve({ status, body, headers }));
    let i = 0;
    const next = (): void => {
      if (s.destroyed || s.closed) return;
      if (i === parts.length) {
        s.end();
        return;
      }
      s.write(parts[i++]!);
      setTimeout(next, gapMs);
    };
    next();
  });
}

/** `text` cut into `n` pieces of nearly equal length. */
function pieces(text: string, n: number): string[] {
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('an inference body of unknown length under a policy', () => {
  it('HTTP/1.1 chunked in several writes: read whole, costed and forwarded byte for byte', async () => {
    const { backend, proxy, port } = await setup();
    const body = chat({ maxTokens: 7, tag: 'chunked' });
    const r = await h1Post(port, pieces(body, 4));
    expect(r.status).toBe(200);
    expect(backend.seen).toHaveLength(1);
    expect(backend.seen[0]!.body).toBe(body);
    expect(backend.seen[0]!.maxTokens).toBe(7);
    expect(proxy.bodyBudget.used).toBe(0);
    await expectSettled(proxy);
  });

  it('HTTP/2 without content-length in several DATA frames: read whole, costed and forwarded', async () => {
    const { backend, proxy, port } = await setup();
    await withSession(port, async (session) => {
      const body = chat({ maxTokens: 9, tag: 'h2' });
      const r = await h2Post(session, pieces(body, 3));
      expect(r.status).toBe(200);
      expect(backend.seen).toHaveLength(1);
      expect(backend.seen[0]!.body).toBe(body);
      expect(backend.seen[0]!.maxTokens).toBe(9);
    });
    expect(proxy.bodyBudget.used).toBe(0);
    await expectSettled(proxy);
  });

  it('a hostile body of unknown length is still refused 400 policy_invalid_body, never forwarded', async () => {
    const { backend, proxy, port } = await setup();
    const r = await h1Post(port, ['{"model":"m",', '"max_tokens":-3}']);
    expect(r.status).toBe(400);
    expect((JSON.parse(r.body) as { error: string }).error).toBe('policy_invalid_body');
    expect(backend.seen).toHaveLength(0);
    expect(proxy.bodyBudget.used).toBe(0);
  });

  it('chunked past --buffer-body-bytes: 413 policy_body_unread naming the bound, connection closed, nothing forwarded', async () => {
    const { backend, proxy, port } = await setup({ bufferBodyBytes: 256 });
    const big = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(600) }] });
    const r = await h1Post(port, pieces(big, 6));
    expect(r.status).toBe(413);
    const j = JSON.parse(r.body) as { error: string; max_bytes: number; message: string };
    expect(j.error).toBe('policy_body_unread');
    expect(j.max_bytes).toBe(256);
    expect(j.message).toContain('--buffer-body-bytes');
    expect(r.headers.connection).toBe('close');
    expect(backend.seen).toHaveLength(0);
    expect(proxy.bodyBudget.used).toBe(0);
    // A body just inside the bound, on a fresh connection, goes through.
    const small = chat({ maxTokens: 3 });
    expect(small.length).toBeLessThanOrEqual(256);
    expect((await h1Post(port, pieces(small, 2))).status).toBe(200);
    await expectSettled(proxy);
  });

  it('h2 past --buffer-body-bytes: 413 on that stream only; the session serves the next stream', async () => {
    const { backend, proxy, port } = await setup({ bufferBodyBytes: 256 });
    await withSession(port, async (session) => {
      const big = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'y'.repeat(900) }] });
      const r = await h2Post(session, pieces(big, 5));
      expect(r.status).toBe(413);
      expect((JSON.parse(r.body) as { error: string }).error).toBe('policy_body_unread');
      expect(backend.seen).toHaveLength(0);
      expect((await h2Post(session, [chat({ maxTokens: 2 })])).status).toBe(200);
      expect(backend.seen).toHaveLength(1);
    });
    expect(proxy.bodyBudget.used).toBe(0);
    await expectSettled(proxy);
  });

  it('declared above --buffer-body-bytes: 413 policy_body_unread before the body is read', async () => {
    const { backend, proxy, port } = await setup({ bufferBodyBytes: 128 });
    const big = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'z'.repeat(300) }] });
    // Only the head: the answer must not wait for a body it will not read.
    const r = await h1Post(port, [], { contentLength: big.length });
    expect(r.status).toBe(413);
    expect((JSON.parse(r.body) as { error: string; max_bytes: number }).max_bytes).toBe(128);
    expect(r.headers.connection).toBe('close');
    expect(backend.seen).toHaveLength(0);
    expect(proxy.bodyBudget.used).toBe(0);
  });

  it('the body budget counts the bytes read so far: past --body-memory-bytes, 503 proxy_body_memory_full with Retry-After', async () => {
    const { backend, proxy, port } = await setup({ bodyMemoryBytes: 100 });
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'w'.repeat(200) }] });
    const r = await h1Post(port, pieces(body, 4));
    expect(r.status).toBe(503);
    expect((JSON.parse(r.body) as { error: string }).error).toBe('proxy_body_memory_full');
    expect(r.headers['retry-after']).toBe('1');
    expect(backend.seen).toHaveLength(0);
    expect(proxy.bodyBudget.used).toBe(0);
  });

  it('an h2 stream reset mid-body gives its reserved bytes back and never takes a seat', async () => {
    const { backend, proxy, port } = await setup();
    await withSession(port, async (session) => {
      const streams = Array.from({ length: 20 }, () => {
        const s = session.request({
          ':method': 'POST',
          ':path': '/v1/chat/completions',
          authorization: 'Bearer sk-a',
          'content-type': 'application/json',
        });
        s.on('error', () => {});
        s.write('{"model":"m","messages":[{"role":"user","content":"');
        return s;
      });
      expect(await until(() => proxy.bodyBudget.used > 0)).toBe(true);
      for (const s of streams) s.close(http2.constants.NGHTTP2_CANCEL);
      expect(await until(() => proxy.bodyBudget.used === 0)).toBe(true);
      // The session is still good for a whole request.
      expect((await h2Post(session, [chat({ maxTokens: 1 })])).status).toBe(200);
    });
    expect(backend.seen).toHaveLength(1);
    await expectSettled(proxy);
  });
});
