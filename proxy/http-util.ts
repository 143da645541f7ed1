/**
 * Header plumbing shared by both protocols: the h2 rules (no
 * connection-specific headers) and small writers over HTTP/1.1 and HTTP/2
 * compat responses. (Hop-by-hop filtering of a backend leg's heads is in
 * `leg-headers.ts`.)
 */
import type http from 'node:http';
import type { AnyResponse } from './listener.js';

/** Header values as Node carries them. */
export type HeaderMap = Record<string, string | string[] | number | undefined>;

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
