/**
 * The heads of a backend leg as flat `[name, value, name, value, ...]`
 * lists (the shape undici takes and Node's `writeHead` accepts), built in
 * one pass over the raw headers: hop-by-hop headers (RFC 9110 §7.6.1),
 * those named by Connection and h2 pseudo-headers are dropped, names are
 * lower-cased.
 */
import type { HeaderMap } from './http-util.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'http2-settings',
  'expect',
  'host',
]);

function str(x: string | Buffer): string {
  return typeof x === 'string' ? x : x.toString('latin1');
}

/** Drops from `out` (a flat list built from `raw`) the headers named by a Connection header, if any. */
function dropConnectionNamed(out: string[], conn: string | null): string[] {
  if (conn === null) return out;
  const named = new Set<string>();
  for (const t of conn.split(',')) {
    const n = t.trim().toLowerCase();
    if (n !== 'close' && n !== 'keep-alive') named.add(n);
  }
  if (named.size === 0) return out;
  const kept: string[] = [];
  for (let i = 0; i < out.length; i += 2) if (!named.has(out[i]!)) kept.push(out[i]!, out[i + 1]!);
  return kept;
}

/**
 * The request head sent to the endpoint.
 * @param raw the client's `rawHeaders`
 * @param host the endpoint's `host[:port]`
 * @param xff the client's address (replaces any X-Forwarded-For), or undefined
 * @param dropLength true when the body was read before the decision (its length is the body's)
 */
export function backendRequestHead(
  raw: readonly string[],
  host: string,
  xff: string | undefined,
  dropLength: boolean,
): string[] {
  let conn: string | null = null;
  const out: string[] = ['host', host];
  for (let i = 0; i < raw.length; i += 2) {
    const lk = raw[i]!.toLowerCase();
    if (lk.charCodeAt(0) === 0x3a) continue;
    if (HOP_BY_HOP.has(lk)) {
      if (lk === 'connection') conn = conn === null ? raw[i + 1]! : `${conn},${raw[i + 1]!}`;
      continue;
    }
    if (lk === 'x-forwarded-for' || (dropLength && lk === 'content-length')) continue;
    out.push(lk, raw[i + 1]!);
  }
  if (xff !== undefined) out.push('x-forwarded-for', xff);
  return dropConnectionNamed(out, conn);
}

/**
 * `head` (flat, lower-case names) with `extra`'s headers in place of any of the same names
 * (the proxy's own, e.g. the policy's remaining deadline, which a client cannot set); `head` itself
 * when `extra` is null.
 */
export function withHeaders(head: string[], extra: readonly string[] | null): string[] {
  if (extra === null || extra.length === 0) return head;
  const names = new Set<string>();
  for (let i = 0; i < extra.length; i += 2) names.add(extra[i]!);
  const out: string[] = [];
  for (let i = 0; i < head.length; i += 2) if (!names.has(head[i]!)) out.push(head[i]!, head[i + 1]!);
  out.push(...extra);
  return out;
}

/** The relayed response head, and whether the response is an event stream. */
export interface ResponseHead {
  /** Flat `[name, value, ...]`, names lower-cased. */
  head: string[];
  /** Content-Type starts with `text/event-stream`. */
  eventStream: boolean;
}

/**
 * The response head relayed to the client.
 * @param raw the endpoint's raw headers (undici: Buffers, latin1)
 * @param replace headers that replace the endpoint's of the same names (lower-case names), or null
 */
export function clientResponseHead(
  raw: readonly (string | Buffer)[],
  replace: Readonly<Record<string, string>> | null,
): ResponseHead {
  let conn: string | null = null;
  let eventStream = false;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lk = str(raw[i]!).toLowerCase();
    const v = str(raw[i + 1]!);
    if (HOP_BY_HOP.has(lk)) {
      if (lk === 'connection') conn = conn === null ? v : `${conn},${v}`;
      continue;
    }
    if (replace !== null && replace[lk] !== undefined) continue;
    if (lk === 'content-type') eventStream = v.startsWith('text/event-stream');
    out.push(lk, v);
  }
  if (replace !== null) for (const k in replace) out.push(k, replace[k]!);
  return { head: dropConnectionNamed(out, conn), eventStream };
}

/** A flat list as a header object (repeated names become arrays), for h2 responses. */
export function flatToMap(flat: readonly string[]): HeaderMap {
  const h: HeaderMap = {};
  for (let i = 0; i < flat.length; i += 2) {
    const k = flat[i]!;
    const v = flat[i + 1]!;
    const prev = h[k];
    if (prev === undefined) h[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else h[k] = [String(prev), v];
  }
  return h;
}
