/**
 * Replays a deferred request to a backend endpoint when the drain feeds it back: one HTTP/1.1
 * request (its own connection), the intent's key in `Idempotency-Key` (the client's key, else the
 * defer id) so a backend can recognise a second delivery after a crash, and the time left to the
 * deadline in `x-sluice-deadline-ms`. The answer's status is kept, and its body when at most
 * `maxBodyBytes` (the rest of a longer body is read and dropped).
 */
import http from 'node:http';
import type { Target } from '../backend-pools.js';
import type { DeferredRequest } from './deferred-payload.js';

/** What the backend answered, or why there was no answer. */
export type ReplayResult =
  | { readonly ok: true; readonly status: number; readonly body?: Buffer; readonly contentType?: string }
  | { readonly ok: false; readonly why: 'timeout' | 'error'; readonly detail: string };

/** Header carrying the remaining deadline to the backend, ms. */
export const DEADLINE_HEADER = 'x-sluice-deadline-ms';
/** Header naming the deferred item a replay carries. */
export const DEFER_ID_HEADER = 'x-sluice-defer-id';

/** Sends `r` to `target`; ends within `timeoutMs`. */
export function replay(
  r: DeferredRequest,
  target: Target,
  o: {
    idempotencyKey: string;
    deferId: string;
    remainingMs: number;
    timeoutMs: number;
    maxBodyBytes: number;
  },
): Promise<ReplayResult> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of r.headers) if (k !== 'idempotency-key') headers[k] = v;
    headers.host = `${target.host}:${target.port}`;
    headers['idempotency-key'] = o.idempotencyKey;
    headers[DEFER_ID_HEADER] = o.deferId;
    headers[DEADLINE_HEADER] = String(Math.max(0, Math.floor(o.remainingMs)));
    headers['content-length'] = String(r.body.length);
    let settled = false;
    const done = (v: ReplayResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const req = http.request(
      { host: target.host, port: target.port, method: r.method, path: r.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= o.maxBodyBytes) chunks.push(c);
        });
        res.on('error', (e) => done({ ok: false, why: 'error', detail: e.message }));
        res.on('end', () => {
          const ct = res.headers['content-type'];
          done({
            ok: true,
            status: res.statusCode ?? 0,
            ...(size <= o.maxBodyBytes ? { body: Buffer.concat(chunks) } : {}),
            ...(typeof ct === 'string' ? { contentType: ct } : {}),
          });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, why: 'timeout', detail: `no answer within ${o.timeoutMs} ms` });
    }, o.timeoutMs);
    req.on('error', (e) => done({ ok: false, why: 'error', detail: e.message }));
    req.end(r.body);
  });
}
