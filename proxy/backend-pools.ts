/**
 * The pooled keep-alive clients to the endpoints: one undici Pool per
 * endpoint (`IP:port`), HTTP/1.1, one request per connection at a time, no
 * connection limit. Every socket is counted by the accept valve as a
 * backend leg while it lives; idle sockets close after BACKEND_IDLE_MS.
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

  constructor(valve: AcceptValve) {
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
        // No per-request backend timeout: SSE streams may pause for long.
        headersTimeout: 0,
        bodyTimeout: 0,
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
