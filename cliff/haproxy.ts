/**
 * The reference line of a cliff test: HAProxy 2.6 (Debian package `haproxy`) in front of the same
 * emulated engines, with the nearest equivalent of the gate's rule, written by
 * `haproxy-config.ts`: `maxconn` per server = the endpoint ceiling (fc_ep_max_inflight, else the
 * service ceiling shared over the servers), the 429 queue bound = fc_max_queue_depth,
 * `timeout queue` = fc_max_queue_wait_ms.
 *
 * Refusal bodies use the gate's error words (`admission_capacity`, `admission_queue_timeout`) so
 * the driver classifies them as it does the gate's (shed, timed out). `haproxy-process.ts` finds,
 * starts and stops it.
 */
import { haproxyConfigText } from './haproxy-config.js';

/** The gate settings HAProxy approximates. */
export interface HaproxyRule {
  /** Engine ports on 127.0.0.1. */
  servers: number[];
  /** In-flight requests per server (`maxconn`); 0 = no limit. */
  maxconnPerServer: number;
  /** Queue bound (429 at or above it); 0 = no queue (429 when every server is full). */
  queueDepth: number;
  /** Queue wait before 503, real ms. */
  queueWaitMs: number;
  /** Listen port on 127.0.0.1. */
  port: number;
}

/** The configuration text for `rule` (`haproxy-config.ts`). */
export function haproxyConfig(rule: HaproxyRule): string {
  return haproxyConfigText({
    port: rule.port,
    servers: rule.servers,
    serverName: (i) => `e${i}`,
    maxconnPerServer: rule.maxconnPerServer,
    queueDepth: rule.queueDepth,
    queueWaitMs: Math.max(1, Math.round(rule.queueWaitMs)),
    maxconn: 4096,
    keepAliveS: 30,
    httpReuse: 'safe',
    queueFull: { error: 'admission_capacity', retryAfterS: 1 },
    queueTimeout: { error: 'admission_queue_timeout', retryAfterS: 1 },
  });
}
