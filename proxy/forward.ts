/**
 * The backend leg of an admitted (or bypassed) request: an undici dispatch
 * on the endpoint's pool, the response relayed chunk by chunk (SSE
 * included, never buffered, with backpressure: the dispatch is paused while
 * the client's response is full), the admission headers put on the head in
 * place of the backend's, and the first `data:` event and the usage counts
 * observed on the way. One object per leg; no closures per request.
 */
import type http from 'node:http';
import type net from 'node:net';
import { PassThrough } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type AdmissionHeaderValues, admissionHeaders } from '../gate/index.js';
import { type BackendPools, isBackendTimeout, onReusedSocket, type Target } from './backend-pools.js';
import { directSocket, writeFramedChunk } from './chunked-writer.js';
import type { Exchange } from './exchange.js';
import { endResponse, writeChunk, writeHead } from './http-util.js';
import { backendRequestHead, clientResponseHead, flatToMap, withHeaders } from './leg-headers.js';
import type { AnyResponse } from './listener.js';
import type { LiveLeg, LiveLegs } from './live-legs.js';
import { FirstDataWatch, UsageTail } from './sse.js';

export type { Target } from './backend-pools.js';

/**
 * How a leg failed: before or after the response head; `timeout` (no head,
 * or a silent body, within the backend time limits); `endpoint_down` (cut
 * because the endpoint's breaker opened while the leg was silent);
 * `body_too_large` and `body_timeout` (a streamed request body silent past
 * its time limit) are the client's fault.
 */
export type LegFailure =
  | 'before_head'
  | 'mid_body'
  | 'timeout'
  | 'endpoint_down'
  | 'body_too_large'
  | 'body_timeout';

/** Who is told what a leg did (the request handler: one object for all its legs). */
export interface LegOwner {
  /** Admission header values for the head of `ex`'s response, or null (no permit, or not exposed). */
  legExpose(ex: Exchange): AdmissionHeaderValues | null;
  /** The first SSE data event of `ex` went to the client. */
  legFirstData(ex: Exchange): void;
  /** The leg of `ex` to `target` failed. */
  legFailed(ex: Exchange, target: Target, kind: LegFailure): void;
  /** The backend answered `status` and its body was relayed completely. */
  legRelayed(ex: Exchange, target: Target, status: number): void;
}

/** What every leg of a handler shares. */
export interface LegContext {
  pools: BackendPools;
  /** Largest streamed request body, in bytes; past it the leg is aborted with 413. */
  maxBodyBytes: number;
  /** Longest silence of a streamed request body, in ms; past it the leg is aborted with 408. 0: none. */
  bodyTimeoutMs: number;
  owner: LegOwner;
  /** The running legs, by endpoint. */
  live: LiveLegs;
}

/** A started leg, as the exchange sees it: it can be cut when the client goes away. */
export interface Abortable {
  abort(): void;
  /** The endpoint the leg runs to, when it is a backend leg. */
  readonly endpointId?: string;
}

class Leg implements Dispatcher.DispatchHandler, Abortable, LiveLeg {
  #abort: ((err?: Error) => void) | null = null;
  #done = false;
  #headSeen = false;
  #status = 0;
  #watch: FirstDataWatch | null = null;
  readonly #tail = new UsageTail();
  #resume: (() => void) | null = null;
  #onDrain: (() => void) | null = null;
  /** The HTTP/1.1 response, whose chunks may be framed on its socket directly (null on h2). */
  #h1: http.ServerResponse | null = null;
  /** Bytes of a streamed request body so far. */
  #sent = 0;
  /** Heads and chunks received from the endpoint. */
  progress = 0;

  constructor(
    readonly ex: Exchange,
    readonly target: Target,
    readonly cx: LegContext,
    readonly retried: boolean,
  ) {}

  get endpointId(): string {
    return this.target.id;
  }

  start(): void {
    const ex = this.ex;
    const t = this.target;
    ex.backend = this;
    this.cx.live.add(this);
    const headers = withHeaders(
      backendRequestHead(
        ex.req.rawHeaders,
        t.port === 80 ? t.host : `${t.host}:${t.port}`,
        ex.req.socket?.remoteAddress,
        ex.body !== null,
      ),
      ex.backendHeaders,
    );
    let body: Buffer | PassThrough | null = ex.body;
    if (body === null) {
      // Piped through a PassThrough so that undici, ending the leg, destroys
      // only that, never the client's request (whose connection still has to
      // carry the 413 or 502).
      const pt = new PassThrough();
      const ms = this.cx.bodyTimeoutMs;
      const timer = ms > 0 ? setTimeout(() => this.#fail('body_timeout'), ms).unref() : null;
      ex.req.on('data', (c: Buffer) => {
        timer?.refresh();
        this.#sent += c.length;
        if (this.#sent > this.cx.maxBodyBytes) this.#fail('body_too_large');
      });
      if (timer !== null) {
        const stop = (): void => clearTimeout(timer);
        ex.req.once('end', stop);
        ex.req.once('close', stop);
      }
      ex.req.on('error', () => {});
      ex.req.pipe(pt);
      body = pt;
    }
    this.cx.pools
      .get(t)
      .dispatch({ path: ex.path, method: ex.method as Dispatcher.HttpMethod, headers, body }, this);
  }

  /** The client went away: the backend request is cut. */
  abort(): void {
    if (this.#done) return;
    this.#done = true;
    this.cx.live.delete(this);
    this.#tail.release();
    this.#abort?.();
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.#done) abort();
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    if (this.#done) return false;
    this.#headSeen = true;
    this.progress++;
    this.#resume = resume;
    this.#status = status;
    const ex = this.ex;
    const expose = this.cx.owner.legExpose(ex);
    const { head, eventStream } = clientResponseHead(
      raw,
      expose === null ? null : lowerCased(admissionHeaders(expose)),
    );
    if (ex.protocol === 'h2') writeHead(ex.res, 'h2', status, flatToMap(head));
    else {
      this.#h1 = ex.res as http.ServerResponse;
      this.#h1.writeHead(status, head);
    }
    if (eventStream) this.#watch = new FirstDataWatch();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#done) return true;
    this.progress++;
    const ex = this.ex;
    const w = this.#watch;
    // After the head went out (with the first chunk), HTTP/1.1 chunks are framed on the socket here.
    const sock: net.Socket | null = this.#h1 === null ? null : directSocket(this.#h1);
    const ok = sock === null ? writeChunk(ex.res, chunk) : writeFramedChunk(sock, chunk);
    if (w !== null && !w.found && w.feed(chunk)) this.cx.owner.legFirstData(ex);
    this.#tail.feed(chunk);
    if (ok) return true;
    this.#onDrain ??= () => {
      if (!this.#done) this.#resume?.();
    };
    // A direct write waits for the socket's drain, a res.write for the response's.
    (sock ?? (ex.res as AnyResponse & { once(e: 'drain', f: () => void): unknown })).once(
      'drain',
      this.#onDrain,
    );
    return false;
  }

  onComplete(): void {
    if (this.#done) return;
    this.#done = true;
    this.cx.live.delete(this);
    const ex = this.ex;
    const u = this.#tail.usage();
    this.#tail.release();
    ex.promptTokens = u.prompt;
    ex.outputTokens = u.output;
    this.cx.owner.legRelayed(ex, this.target, this.#status);
    endResponse(ex.res);
  }

  onError(err: Error): void {
    if (this.#done) return;
    const ex = this.ex;
    if (
      !this.retried &&
      !this.#headSeen &&
      ex.body !== null &&
      !ex.res.headersSent &&
      !ex.gone &&
      onReusedSocket(err)
    ) {
      // The endpoint closed an idle pooled socket as the request went out: once more.
      this.#done = true;
      this.cx.live.delete(this);
      new Leg(ex, this.target, this.cx, true).start();
      return;
    }
    this.#fail(isBackendTimeout(err) ? 'timeout' : ex.res.headersSent ? 'mid_body' : 'before_head');
  }

  /** The endpoint was declared dead while this leg was silent. */
  cut(): void {
    this.#fail('endpoint_down');
  }

  #fail(kind: LegFailure): void {
    if (this.#done) return;
    this.#done = true;
    this.cx.live.delete(this);
    this.#tail.release();
    this.#abort?.();
    this.cx.owner.legFailed(this.ex, this.target, kind);
  }
}

/**
 * Starts the leg. The exchange's response is written by the leg from here on.
 * A buffered request that fails on a reused pooled socket before any answer
 * (the endpoint closed it while idle) is sent once more.
 */
export function startLeg(ex: Exchange, target: Target, cx: LegContext): void {
  new Leg(ex, target, cx, false).start();
}

function lowerCased(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) out[k.toLowerCase()] = h[k]!;
  return out;
}
