/**
 * HTTP transports of the driver: HTTP/1.1 over a keep-alive agent (`node:http`) and HTTP/2 over
 * cleartext with prior knowledge (`node:http2`, one session per origin, re-opened when it goes
 * away). Both report the response head, the body chunks (as UTF-8 text) with their arrival times,
 * and the end; `abort()` tears the request down (RST_STREAM on HTTP/2, the socket on HTTP/1.1).
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { HttpRequestSpec } from '../shared/payload.js';

/** Receives a response as it arrives. Times come from the driver's clock. */
export interface ResponseHandlers {
  head(status: number, headers: Record<string, string>): void;
  chunk(text: string): void;
  end(): void;
  /** Transport failure (refused, reset, protocol error); not called after abort(). */
  error(err: Error): void;
}

/** A request in flight. */
export interface InFlight {
  abort(): void;
}

/** Sends requests to one target over HTTP/1.1 or HTTP/2. */
export interface Transport {
  send(spec: HttpRequestSpec, protocol: 'http1' | 'h2', h: ResponseHandlers): InFlight;
  close(): Promise<void>;
}

/** Header values as single strings (lower-case names). */
function flatHeaders(h: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(':') || v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

/** Calls at most one of end/error, and nothing after an abort. */
function once(h: ResponseHandlers): ResponseHandlers & { aborted: boolean; settled: boolean } {
  const s = {
    aborted: false,
    settled: false,
    head: (status: number, headers: Record<string, string>) => {
      if (!s.aborted && !s.settled) h.head(status, headers);
    },
    chunk: (text: string) => {
      if (!s.aborted && !s.settled) h.chunk(text);
    },
    end: () => {
      if (s.aborted || s.settled) return;
      s.settled = true;
      h.end();
    },
    error: (err: Error) => {
      if (s.aborted || s.settled) return;
      s.settled = true;
      h.error(err);
    },
  };
  return s;
}

/** The transports for a base URL (`http://host:port`; https is not supported by the h2c path). */
export function createTransport(target: string): Transport {
  const url = new URL(target);
  if (url.protocol !== 'http:') throw new Error(`--target: ${target} is not an http:// URL`);
  const basePath = url.pathname.replace(/\/$/, '');
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, scheduling: 'fifo' });
  let session: http2.ClientHttp2Session | null = null;
  const h2 = (): http2.ClientHttp2Session => {
    if (session !== null && !session.closed && !session.destroyed) return session;
    const s = http2.connect(url.origin);
    const drop = () => {
      if (session === s) session = null;
    };
    s.on('error', drop);
    s.on('close', drop);
    s.on('goaway', drop);
    session = s;
    return s;
  };

  const sendH1 = (spec: HttpRequestSpec, hs: ReturnType<typeof once>): InFlight => {
    const headers: Record<string, string> = { ...spec.headers };
    if (spec.body !== null) headers['content-length'] = String(Buffer.byteLength(spec.body));
    const req = http.request({
      host: url.hostname,
      port: url.port || 80,
      method: spec.method,
      path: basePath + spec.path,
      headers,
      agent,
    });
    req.on('response', (res) => {
      hs.head(res.statusCode ?? 0, flatHeaders(res.headers));
      res.setEncoding('utf8');
      res.on('data', (c: string) => hs.chunk(c));
      res.on('end', () => hs.end());
      res.on('error', (e) => hs.error(e));
      res.on('close', () => {
        if (!res.complete) hs.error(new Error('response cut short'));
      });
    });
    req.on('error', (e) => hs.error(e));
    req.end(spec.body ?? undefined);
    return {
      abort() {
        hs.aborted = true;
        req.destroy();
      },
    };
  };

  const sendH2 = (spec: HttpRequestSpec, hs: ReturnType<typeof once>): InFlight => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = h2().request(
        {
          ':method': spec.method,
          ':path': basePath + spec.path,
          ...spec.headers,
          // As HTTP/2 clients do when they know the body (RFC 9113 §8.1.1 allows it): a gate that
          // reads the cost from the body before it decides may refuse a body of unknown length.
          ...(spec.body === null ? {} : { 'content-length': String(Buffer.byteLength(spec.body)) }),
        },
        { endStream: spec.body === null },
      );
    } catch (e) {
      queueMicrotask(() => hs.error(e as Error));
      return {
        abort() {
          hs.aborted = true;
        },
      };
    }
    stream.on('response', (headers) => hs.head(Number(headers[':status'] ?? 0), flatHeaders(headers)));
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => hs.chunk(c));
    stream.on('end', () => hs.end());
    stream.on('error', (e) => hs.error(e));
    stream.on('close', () => {
      if (stream.rstCode !== undefined && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR)
        hs.error(new Error(`stream reset (code ${stream.rstCode})`));
      else hs.end();
    });
    if (spec.body !== null) stream.end(spec.body);
    return {
      abort() {
        hs.aborted = true;
        if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  };

  return {
    send(spec, protocol, h) {
      const hs = once(h);
      return protocol === 'h2' ? sendH2(spec, hs) : sendH1(spec, hs);
    },
    async close() {
      agent.destroy();
      const s = session;
      session = null;
      if (s !== null && !s.closed) await new Promise<void>((r) => s.close(() => r()));
    },
  };
}
