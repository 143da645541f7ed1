/**
 * The backend leg of an admitted (or bypassed) request: a pooled
 * keep-alive request to the endpoint, the response relayed chunk by chunk
 * (SSE included, never buffered, with backpressure), the admission headers
 * put on the head in place of the backend's, and the first `data:` event
 * and the usage counts observed on the way.
 */
import http from 'node:http';
import { type AdmissionHeaderValues, admissionHeaders } from '../gate/index.js';
import type { Exchange } from './exchange.js';
import { endResponse, endToEnd, type HeaderMap, replaceHeader, writeChunk, writeHead } from './http-util.js';
import { FirstDataWatch, UsageTail } from './sse.js';

/** Where a request goes. */
export interface Target {
  /** `IP:port`, as the gate names endpoints. */
  id: string;
  host: string;
  port: number;
}

/** What the leg reports back to its exchange's owner. */
export interface LegHooks {
  agent: http.Agent;
  /** Largest streamed request body, in bytes; past it the leg is aborted with 413. */
  maxBodyBytes: number;
  /** Admission header values for the head, or null (no permit, or not exposed). */
  exposeHeaders(): AdmissionHeaderValues | null;
  /** The first SSE data event went to the client. */
  firstData(): void;
  /** The backend leg failed before (`before_head`) or after (`mid_body`) the response head; `body_too_large` is the client's fault. */
  failed(kind: 'before_head' | 'mid_body' | 'body_too_large', err: Error | null): void;
  /** The backend answered (any status) and its body was relayed completely. */
  relayed(status: number): void;
}

/**
 * Starts the leg. The exchange's response is written by the leg from here on.
 * A buffered request that fails on a reused pooled socket before any answer
 * (the endpoint closed it while idle) is sent once more on a fresh socket.
 */
export function startLeg(ex: Exchange, target: Target, hooks: LegHooks, retried = false): void {
  const headers = endToEnd(ex.req.headers as HeaderMap);
  headers.host = target.port === 80 ? target.host : `${target.host}:${target.port}`;
  const xff = ex.req.socket?.remoteAddress;
  if (xff) headers['x-forwarded-for'] = xff;
  if (ex.body !== null) headers['content-length'] = ex.body.length;
  let done = false;
  const fail = (kind: 'before_head' | 'mid_body' | 'body_too_large', err: Error | null): void => {
    if (done) return;
    done = true;
    breq.destroy();
    hooks.failed(kind, err);
  };
  const breq = http.request({
    host: target.host,
    port: target.port,
    method: ex.method,
    path: ex.path,
    headers: headers as http.OutgoingHttpHeaders,
    agent: hooks.agent,
  });
  ex.backendReq = breq;
  breq.on('error', (err: NodeJS.ErrnoException) => {
    const stale = breq.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
    if (!done && stale && !retried && ex.body !== null && !ex.res.headersSent && !ex.gone) {
      done = true;
      startLeg(ex, target, hooks, true);
      return;
    }
    fail(ex.res.headersSent ? 'mid_body' : 'before_head', err);
  });
  breq.on('response', (bres) => {
    if (done) {
      bres.destroy();
      return;
    }
    const out = endToEnd(bres.headers as HeaderMap);
    const expose = hooks.exposeHeaders();
    if (expose !== null)
      for (const [k, v] of Object.entries(admissionHeaders(expose))) replaceHeader(out, k, v);
    const status = bres.statusCode ?? 502;
    writeHead(ex.res, ex.protocol, status, out);
    const ctype = String(bres.headers['content-type'] ?? '');
    const watch = ctype.startsWith('text/event-stream') ? new FirstDataWatch() : null;
    const tail = new UsageTail();
    bres.on('data', (chunk: Buffer) => {
      if (done) return;
      if (watch !== null && !watch.found && watch.feed(chunk)) {
        const ok = writeChunk(ex.res, chunk);
        hooks.firstData();
        if (!ok) bres.pause();
      } else if (!writeChunk(ex.res, chunk)) bres.pause();
      tail.feed(chunk);
    });
    ex.res.on('drain', () => bres.resume());
    bres.on('end', () => {
      if (done) return;
      done = true;
      const u = tail.usage();
      ex.promptTokens = u.prompt;
      ex.outputTokens = u.output;
      hooks.relayed(status);
      endResponse(ex.res);
    });
    bres.on('error', (err) => fail('mid_body', err));
    bres.on('close', () => {
      if (!bres.complete) fail('mid_body', null);
    });
  });
  if (ex.body !== null) {
    breq.end(ex.body);
    return;
  }
  let sent = 0;
  ex.req.on('data', (c: Buffer) => {
    sent += c.length;
    if (sent > hooks.maxBodyBytes) fail('body_too_large', null);
  });
  ex.req.on('error', () => {});
  ex.req.pipe(breq);
}
