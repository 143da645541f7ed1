/**
 * How the proxy stores a deferred request (the opaque payload of a DeferredItem): JSON with the
 * service it came to, method, normalised path, the headers the backend needs and the body in
 * base64. Credentials (Authorization, X-Api-Key, Cookie) are NOT stored: the proxy verified them
 * when the request was deferred, and the backend never needed them (the proxy does not pass a
 * verified tenant in a header either); hop-by-hop headers are dropped too.
 */

/** Version of the payload encoding. */
export const PAYLOAD_VERSION = 1;

/** A deferred request as it is replayed. */
export interface DeferredRequest {
  readonly service: string;
  readonly method: string;
  readonly path: string;
  /** `[name, value]`, names lower-case. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/** Headers kept for the replay (everything else is left out). */
const KEEP = new Set([
  'content-type',
  'accept',
  'user-agent',
  'openai-organization',
  'openai-project',
  'x-request-id',
  'traceparent',
  'tracestate',
]);

/** Request headers worth storing, from a raw `[name, value, ...]` list, plus the intent's key header. */
export function storedHeaders(raw: readonly string[], keyHeader: string): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const n = raw[i]!.toLowerCase();
    if (KEEP.has(n) || n === keyHeader) out.push([n, raw[i + 1]!]);
  }
  return out;
}

export function encodePayload(r: DeferredRequest): Uint8Array {
  return Buffer.from(
    JSON.stringify({
      v: PAYLOAD_VERSION,
      service: r.service,
      method: r.method,
      path: r.path,
      headers: r.headers,
      body: r.body.toString('base64'),
    }),
    'utf8',
  );
}

/** Decodes a payload; undefined when it is not one this version wrote (the item is then cancelled). */
export function decodePayload(p: Uint8Array): DeferredRequest | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (
    o.v !== PAYLOAD_VERSION ||
    typeof o.service !== 'string' ||
    typeof o.method !== 'string' ||
    typeof o.path !== 'string' ||
    typeof o.body !== 'string' ||
    !Array.isArray(o.headers) ||
    !o.headers.every(
      (h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string',
    )
  )
    return undefined;
  return {
    service: o.service,
    method: o.method,
    path: o.path,
    headers: o.headers as [string, string][],
    body: Buffer.from(o.body, 'base64'),
  };
}
