/**
 * Header plumbing shared by both protocols: hop-by-hop filtering (RFC 9110
 * §7.6.1), the h2 rules (no connection-specific headers), and small writers
 * over HTTP/1.1 and HTTP/2 compat responses.
 */
import type http from 'node:http';
import type { AnyResponse } from './listener.js';

/** Header values as Node carries them. */
export type HeaderMap = Record<string, string | string[] | number | undefined>;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'http2-settings',
  'expect',
  'host',
]);

/** Copies headers without hop-by-hop ones, those named by Connection, and h2 pseudo-headers. */
export function endToEnd(h: Readonly<HeaderMap>): HeaderMap {
  const named = new Set<string>();
  const conn = h.connection;
  if (typeof conn === 'string') for (const t of conn.split(',')) named.add(t.trim().toLowerCase());
  const out: HeaderMap = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    const lk = k.toLowerCase();
    if (lk.startsWith(':') || HOP_BY_HOP.has(lk) || named.has(lk)) continue;
    out[lk] = v;
  }
  return out;
}

/** Sets `name` (case-insensitively replacing any header of that name). */
export function replaceHeader(h: HeaderMap, name: string, value: string): void {
  const ln = name.toLowerCase();
  for (const k of Object.keys(h)) if (k.toLowerCase() === ln) delete h[k];
  h[name] = value;
}

/** Writes a response head; on h2 connection-specific headers are dropped. */
export function writeHead(
  res: AnyResponse,
  protocol: 'http1' | 'h2',
  status: number,
  headers: HeaderMap,
): void {
  if (protocol === 'h2') {
    const h: HeaderMap = {};
    for (const [k, v] of Object.entries(headers)) {
      const lk = k.toLowerCase();
      if (v === undefined || lk === 'connection' || lk === 'keep-alive' || lk === 'transfer-encoding')
        continue;
      h[lk] = v;
    }
    (res as unknown as http.ServerResponse).writeHead(status, h as http.OutgoingHttpHeaders);
  } else {
    (res as http.ServerResponse).writeHead(status, headers as http.OutgoingHttpHeaders);
  }
}

/** Writes a complete response with a JSON body. */
export function sendJson(
  res: AnyResponse,
  protocol: 'http1' | 'h2',
  status: number,
  body: unknown,
  headers: HeaderMap = {},
): void {
  if (res.headersSent || res.writableEnded) return;
  const text = JSON.stringify(body);
  writeHead(res, protocol, status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  (res as http.ServerResponse).end(text);
}

/** Writes a body chunk; false asks the writer to wait for 'drain'. */
export function writeChunk(res: AnyResponse, chunk: Buffer): boolean {
  return (res as http.ServerResponse).write(chunk);
}

/** Ends a response. */
export function endResponse(res: AnyResponse): void {
  (res as http.ServerResponse).end();
}

/**
 * The request's declared body length: a number from Content-Length, null
 * when the length is unknown (chunked, or h2 without one), 0 when there is
 * no body.
 */
export function declaredLength(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  protocol: 'http1' | 'h2',
  h2EndedWithHeaders: boolean,
): number | null {
  const cl = headers['content-length'];
  if (typeof cl === 'string' && /^\d+$/.test(cl)) return Number(cl);
  if (protocol === 'h2') return h2EndedWithHeaders ? 0 : null;
  const te = headers['transfer-encoding'];
  return te === undefined ? 0 : null;
}
