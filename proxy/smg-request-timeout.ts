/**
 * SMG's `--request-timeout-secs`: the timeout of the request the gateway
 * sends to a worker, which also bounds how long a stalled request keeps its
 * permit. It runs from the moment the request goes to a worker (admission,
 * a queued request's turn, or a bypass), not from its arrival: queue time
 * is bounded by `--queue-timeout-secs`. Past it, a request whose response
 * has not started is answered 504 `request_timeout` in SMG's error format; a
 * response already streaming is cut. Either way the backend leg is aborted,
 * the permit released at once, and the timeout counted as a failure of that
 * worker by its circuit breaker.
 */
import type { RealClock } from './clock.js';
import type { Exchange } from './exchange.js';
import type { RefusalResponse } from './handler.js';
import { sendJson } from './http-util.js';

/** SMG's default `--request-timeout-secs`. */
export const SMG_REQUEST_TIMEOUT_SECS = 1800;
/** Largest `--request-timeout-secs`: 7 days (setTimeout's own limit is about 24.8 days). */
export const SMG_MAX_REQUEST_TIMEOUT_SECS = 7 * 24 * 3600;
/** The error code of a request that outlived `--request-timeout-secs`. */
export const SMG_REQUEST_TIMEOUT_CODE = 'request_timeout';

/** The 504 of a request that got no response head within the timeout. */
export function requestTimeoutResponse(timeoutSecs: number): RefusalResponse {
  const code = SMG_REQUEST_TIMEOUT_CODE;
  return {
    status: 504,
    headers: { 'X-SMG-Error-Code': code, Connection: 'close' },
    body: {
      error: {
        type: 'Gateway Timeout',
        code,
        message: `the worker did not answer within ${timeoutSecs} s`,
        param: null,
      },
    },
    error: code,
  };
}

/** Arms one timer per request sent to a worker; cleared when the response closes. */
export class RequestDeadlines {
  /** Requests ended by the timeout. */
  expired = 0;
  /**
   * Told the worker of each request the timeout ended, as a failure against its circuit breaker
   * (SMG counts a failed request to a worker, a timeout included, against that worker's breaker).
   */
  onWorkerTimeout: ((endpointId: string) => void) | null = null;
  readonly #armed = new WeakSet<Exchange>();

  /**
   * @param timeoutSecs `--request-timeout-secs` (clock seconds)
   * @param clock the gateway's clock (its time scale turns clock seconds into real ones)
   */
  constructor(
    readonly timeoutSecs: number,
    readonly clock: RealClock,
  ) {}

  /** Starts `ex`'s timeout (once). */
  arm(ex: Exchange): void {
    if (this.#armed.has(ex)) return;
    this.#armed.add(ex);
    const t = setTimeout(() => this.#expire(ex), (this.timeoutSecs * 1000) / this.clock.timeScale);
    t.unref();
    ex.res.once('close', () => clearTimeout(t));
  }

  #expire(ex: Exchange): void {
    if (ex.life.over || ex.gone || ex.res.writableEnded) return;
    this.expired++;
    const worker = ex.backend?.endpointId;
    ex.backend?.abort();
    if (worker !== undefined) this.onWorkerTimeout?.(worker);
    ex.reason = 'request_timeout';
    ex.error = SMG_REQUEST_TIMEOUT_CODE;
    ex.release();
    if (!ex.res.headersSent) {
      ex.outcome = 'timed_out';
      const r = requestTimeoutResponse(this.timeoutSecs);
      sendJson(ex.res, ex.protocol, r.status, r.body, r.headers);
    } else {
      // The head (and its status) is out: all that is left is to cut the stream.
      ex.outcome = 'failed';
      ex.res.destroy();
    }
  }
}
