/**
 * The pooled keep-alive clients to the endpoints: one undici Pool per
 * endpoint (`IP:port`), HTTP/1.1, one request per connection at a time, no
 * connection limit. Every socket is counted by the accept valve as a
 * backend leg while it lives; idle sockets close after BACKEND_IDLE_MS.
 * Every request has a time limit to its response head and between body
 * chunks ({@link BackendTimeouts}), so an endpoint that accepts and never
 * answers cannot hold a unit for good.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { buildConnector, Pool } from 'undici';
import type { AcceptValve } from './accept-valve.js';

/** undici, loaded when the proxy makes its pools, not when any `sluice` command starts (BENCHMARKS.md). */
const undici = (): typeof import('undici') => createRequire(import.meta.url)('undici');

/**
 * Longest idle time of a pooled backend socket, in ms (below Node's 5 s
 * server keep-alive). undici closes it sooner, 2 s before the endpoint's own
 * `Keep-Alive: timeout`, when the endpoint announces one.
 */
export const BACKEND_IDLE_MS = 4_000;

/** Time limits of a backend request (undici's `headersTimeout` and `bodyTimeout`). */
export interface BackendTimeouts {
  /**
   * Longest wait for the response head once the request is sent, in ms. An
   * unstreamed completion sends its head only when the whole answer is
   * generated, and a huge prompt's prefill can take tens of seconds, so this
   * is generous. 0: no limit. @default 300000
   */
  headersTimeoutMs: number;
  /**
   * Longest silence between two chunks of the response body, in ms (not
   * counted while the client's side is full and the leg is paused). Tokens
   * of a stream come every few tens of ms; two minutes of silence is a stalled
   * engine (a preempted request may wait a while). 0: no limit. @default 120000
   */
  bodyIdleTimeoutMs: number;
}

export const DEFAULT_BACKEND_TIMEOUTS: BackendTimeouts = {
  headersTimeoutMs: 300_000,
  bodyIdleTimeoutMs: 120_000,
};

/** Whether `err` is undici's head or body time limit. */
export function isBackendTimeout(err: Error): boolean {
  const code = (err as { code?: string }).code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/** Where a request goes. */
export interface Target {
  /** `IP:port`, as the gate names endpoints. */
  id: string;
  host: string;
  port: number;
}

/**
 * Errors of a pooled socket that had already carried a response when it
 * failed: the endpoint closed it while idle, so a request that got no
 * answer on it may be sent again.
 */
const staleErrors = new WeakSet<Error>();

/**
 * Whether `err` ended a request on a reused socket: reset or broken pipe, or
 * closed by the other side, on a socket that had already read bytes.
 */
export function onReusedSocket(err: Error): boolean {
  if (staleErrors.has(err)) return true;
  const info = (err as { socket?: { bytesRead?: number } }).socket;
  return (err as { code?: string }).code === 'UND_ERR_SOCKET' && (info?.bytesRead ?? 0) > 0;
}

/** One Pool per endpoint, created on first use. */
export class BackendPools {
  readonly #pools = new Map<string, Pool>();
  readonly #connect: buildConnector.connector;
  readonly #t: BackendTimeouts;

  constructor(valve: AcceptValve, timeouts: Partial<BackendTimeouts> = {}) {
    this.#t = { ...DEFAULT_BACKEND_TIMEOUTS, ...timeouts };
    const base = undici().buildConnector({});
    this.#connect = (opts, cb) => {
      base(opts, (err, socket) => {
        if (socket) {
          valve.track(socket as Socket);
          // Runs before undici's own listener: marks errors of sockets that already answered.
          socket.on('error', (e: NodeJS.ErrnoException) => {
            if (socket.bytesRead > 0 && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) staleErrors.add(e);
          });
        }
        (cb as (e: Error | null, s: typeof socket) => void)(err, socket);
      });
    };
  }

  /** The pool of `target`. */
  get(target: Target): Pool {
    let p = this.#pools.get(target.id);
    if (p === undefined) {
      const { Pool } = undici();
      p = new Pool(`http://${target.port === 80 ? target.host : `${target.host}:${target.port}`}`, {
        connect: this.#connect,
        connections: null,
        pipelining: 1,
        keepAliveTimeout: BACKEND_IDLE_MS,
        keepAliveMaxTimeout: BACKEND_IDLE_MS,
        headersTimeout: this.#t.headersTimeoutMs,
        bodyTimeout: this.#t.bodyIdleTimeoutMs,
      });
      this.#pools.set(target.id, p);
    }
    return p;
  }

  /** Closes every pool's sockets at once (in-flight requests fail). */
  async destroy(): Promise<void> {
    const all = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(all.map((p) => p.destroy()));
  }
}
