/**
 * One service's listening socket, speaking HTTP/1.1 and h2c (prior
 * knowledge) on the same port: the first bytes of a connection are sniffed
 * for the HTTP/2 preface and the socket is handed to an http.Server or an
 * http2 server. Every connection passes the accept valve first.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { AcceptValve } from './accept-valve.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** A request from either protocol. */
export type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** A response to either protocol. */
export type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/**
 * Client-side faults seen before a request reached the handler
 * (`idle_timeout`: an h2c session without open streams past the keep-alive
 * idle time).
 */
export type ClientFault = 'malformed' | 'headers_too_large' | 'headers_timeout' | 'reset' | 'idle_timeout';

export interface ListenerOptions {
  host: string;
  port: number;
  valve: AcceptValve;
  /**
   * Longest time a client may take to send a request head (slowloris bound),
   * in ms; a new connection must also show its protocol (a request line or
   * the whole h2c preface) within it.
   */
  headersTimeoutMs: number;
  /** Idle keep-alive connections, and h2c sessions without an open stream, close after this many ms. */
  keepAliveTimeoutMs: number;
  /** Largest request head, in bytes. */
  maxHeaderBytes: number;
  /** How often the head timeout is checked, in ms. */
  checkIntervalMs: number;
  onRequest(req: AnyRequest, res: AnyResponse, protocol: 'http1' | 'h2'): void;
  onFault(kind: ClientFault): void;
}

/** A dual-protocol listener. */
export class ServiceListener {
  readonly #o: ListenerOptions;
  readonly #net: net.Server;
  readonly #h1: http.Server;
  readonly #h2: http2.Http2Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  #closed = false;

  constructor(o: ListenerOptions) {
    this.#o = o;
    this.#h1 = http.createServer({
      keepAliveTimeout: o.keepAliveTimeoutMs,
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: 0,
      maxHeaderSize: o.maxHeaderBytes,
      connectionsCheckingInterval: o.checkIntervalMs,
      noDelay: true,
    });
    this.#h1.on('request', (req, res) => o.onRequest(req, res, 'http1'));
    this.#h1.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) =>
      this.#clientError(err, socket),
    );
    // Starts the head-timeout checker of a server that never listens itself.
    this.#h1.emit('listening');
    this.#h2 = http2.createServer({ maxHeaderListPairs: 256, maxSessionMemory: 16 });
    this.#h2.on('request', (req, res) => o.onRequest(req, res, 'h2'));
    this.#h2.on('session', (s: http2.ServerHttp2Session) => {
      this.#sessions.add(s);
      s.on('error', () => {});
      s.on('close', () => this.#sessions.delete(s));
      if (this.#closed) s.close();
      else this.#watchIdle(s);
    });
    this.#h2.on('sessionError', () => {});
    this.#net = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.#accept(socket));
    this.#net.on('error', () => {});
  }

  /** Starts listening; rejects when the address cannot be bound. */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onErr = (err: Error): void => reject(err);
      this.#net.once('error', onErr);
      this.#net.listen({ host: this.#o.host, port: this.#o.port, backlog: 4096 }, () => {
        this.#net.off('error', onErr);
        resolve();
      });
    });
  }

  /** The bound port. */
  get port(): number {
    const a = this.#net.address();
    return typeof a === 'object' && a !== null ? a.port : this.#o.port;
  }

  /** Open client connections. */
  get connections(): number {
    return this.#sockets.size;
  }

  #accept(socket: net.Socket): void {
    socket.on('error', () => {});
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#o.valve.admit(socket, () => this.#sniff(socket));
  }

  /**
   * Closes `s` once it has had no open stream for the keep-alive idle time
   * (a session that never completes a request head, e.g. HEADERS without
   * END_HEADERS, has none): GOAWAY first, destroyed if still open a head
   * timeout later.
   */
  #watchIdle(s: http2.ServerHttp2Session): void {
    const ms = this.#o.keepAliveTimeoutMs;
    let open = 0;
    const onIdle = (): void => {
      if (s.destroyed) return;
      this.#o.onFault('idle_timeout');
      s.close();
      setTimeout(() => s.destroy(), Math.min(this.#o.headersTimeoutMs, ms)).unref();
    };
    let timer: NodeJS.Timeout | null = setTimeout(onIdle, ms).unref();
    s.on('stream', (st: http2.ServerHttp2Stream) => {
      open++;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      st.once('close', () => {
        if (--open === 0 && !s.destroyed) timer = setTimeout(onIdle, ms).unref();
      });
    });
    s.once('close', () => {
      if (timer !== null) clearTimeout(timer);
    });
  }

  #sniff(socket: net.Socket): void {
    let buf: Buffer = Buffer.alloc(0);
    // No protocol shown within the head time limit (silent, or a partial preface): closed.
    const timer = setTimeout(() => {
      socket.off('data', onData);
      this.#o.onFault('headers_timeout');
      socket.destroy();
    }, this.#o.headersTimeoutMs).unref();
    socket.once('close', () => clearTimeout(timer));
    const onData = (c: Buffer): void => {
      buf = buf.length === 0 ? c : Buffer.concat([buf, c]);
      const n = Math.min(buf.length, PREFACE.length);
      const h2 = buf.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (h2 && buf.length < PREFACE.length) return;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      socket.unshift(buf);
      if (h2) {
        // http2 reads the unshifted bytes itself on the next tick; resuming would lose them.
        this.#h2.emit('connection', socket);
      } else {
        this.#h1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
    socket.resume();
  }

  #clientError(err: NodeJS.ErrnoException, socket: net.Socket): void {
    const code = err.code ?? '';
    let status = 400;
    let kind: ClientFault = 'malformed';
    if (code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      kind = 'headers_too_large';
    } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      kind = 'headers_timeout';
    } else if (code === 'ECONNRESET' || code === 'EPIPE') {
      kind = 'reset';
    }
    this.#o.onFault(kind);
    if (kind !== 'reset' && socket.writable && !(socket as { _httpMessage?: unknown })._httpMessage) {
      const body = JSON.stringify({ error: kind });
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.destroySoon();
    } else socket.destroy();
  }

  /**
   * Stops accepting. Idle connections close now (h2 sessions get a GOAWAY);
   * busy ones close once their responses are done; after `graceMs` every
   * connection left (a half-closed socket, a session that never ends, a
   * request still running) is destroyed, so this always ends within the grace.
   */
  async close(graceMs = 30_000): Promise<void> {
    this.#closed = true;
    // The listening socket's close callback waits for every connection it accepted: not awaited
    // until they are all gone, or one idle session would hold shutdown forever.
    const unbound = new Promise<void>((r) => this.#net.close(() => r()));
    this.#h1.close(() => {});
    this.#h1.closeIdleConnections();
    for (const s of this.#sessions) s.close();
    const end = Date.now() + graceMs;
    while (this.#sockets.size > 0 && Date.now() < end) {
      this.#h1.closeIdleConnections();
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, end - Date.now()))));
    }
    for (const s of this.#sessions) s.destroy();
    for (const s of this.#sockets) s.destroy();
    await unbound;
  }

  /** Destroys everything at once. */
  destroy(): void {
    this.#closed = true;
    this.#net.close();
    this.#h1.close(() => {});
    for (const s of this.#sessions) s.destroy();
    for (const s of this.#sockets) s.destroy();
  }
}
