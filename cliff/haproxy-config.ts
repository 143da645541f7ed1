/**
 * The one HAProxy 2.6 configuration generator: the nearest equivalent of a gate rule (from the
 * HAProxy 2.6 configuration manual: `maxconn`, `timeout queue`, the `queue()` fetch), used by the
 * cliff's reference line (`haproxy.ts`) and by the proxy benchmark (`bench/proxy/haproxy.ts`).
 *
 * - `maxconn` per server = the in-flight ceiling: HAProxy counts in-flight requests per server in
 *   HTTP mode;
 * - the queue bound: HAProxy has no backend maxqueue, so a frontend rule answers 429 once
 *   `queue(be_llm)` reaches the depth (depth 0: as soon as a request would have to wait);
 * - `timeout queue` = the gate's queue wait (503 when it expires);
 * - `option http-no-delay`, or every SSE chunk is held about 200 ms.
 */

/** One refusal HAProxy answers itself: its JSON `error` word and `Retry-After`, s. */
export interface HaproxyRefusal {
  readonly error: string;
  readonly retryAfterS: number;
}

/** Everything the configuration text depends on. */
export interface HaproxyConfigSpec {
  /** Listen port on 127.0.0.1. */
  readonly port: number;
  /** Engine ports on 127.0.0.1, in order, and the name of the server at each index. */
  readonly servers: readonly number[];
  readonly serverName: (index: number) => string;
  /** In-flight requests per server (`maxconn`); 0 = no limit. */
  readonly maxconnPerServer: number;
  /** Queue bound (429 at or above it); 0 = no queue (429 when every server is full). */
  readonly queueDepth: number;
  /** `timeout queue`, ms (written as given: round it before). */
  readonly queueWaitMs: number;
  /** Global and frontend `maxconn`. */
  readonly maxconn: number;
  /** `timeout http-keep-alive`, s. */
  readonly keepAliveS: number;
  readonly httpReuse: 'safe' | 'always';
  /** The 429 of a full queue and the 503 of a queue timeout. */
  readonly queueFull: HaproxyRefusal;
  readonly queueTimeout: HaproxyRefusal;
  /** A comment line on top (without `# `), or none. */
  readonly comment?: string;
}

/** The configuration text for `s`. */
export function haproxyConfigText(s: HaproxyConfigSpec): string {
  const maxconn = s.maxconnPerServer > 0 ? ` maxconn ${s.maxconnPerServer}` : '';
  const full = `{ queue(be_llm) ge ${s.queueDepth > 0 ? s.queueDepth : 1} }`;
  const refusal = (status: number, r: HaproxyRefusal): string =>
    `status ${status} content-type application/json hdr Retry-After ${r.retryAfterS} string '{"error":"${r.error}"}'`;
  const servers = s.servers
    .map((p, i) => `    server ${s.serverName(i)} 127.0.0.1:${p}${maxconn}`)
    .join('\n');
  return `${s.comment === undefined ? '' : `# ${s.comment}\n`}global
    maxconn ${s.maxconn}
    nbthread 1

defaults
    mode http
    option http-keep-alive
    option http-no-delay
    timeout http-request    10s
    timeout http-keep-alive ${s.keepAliveS}s
    timeout connect          2s
    timeout client         120s
    timeout server         120s
    timeout queue          ${s.queueWaitMs}ms

frontend fe_llm
    bind 127.0.0.1:${s.port}
    maxconn ${s.maxconn}
    http-request return ${refusal(429, s.queueFull)} if ${full}
    default_backend be_llm

backend be_llm
    balance leastconn
    http-reuse ${s.httpReuse}
    http-error ${refusal(503, s.queueTimeout)}
${servers}
`;
}
