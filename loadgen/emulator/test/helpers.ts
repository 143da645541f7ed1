/**
 * Loopback HTTP helpers for the emulator's tests: JSON requests, SSE streams with the arrival
 * time of each event, and a minimal Prometheus text parser.
 */
import { type ClientRequest, type IncomingHttpHeaders, request } from 'node:http';

/** A buffered response. */
export interface HttpResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** Sends a request and buffers the whole response. */
export function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  rawBody?: string,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const req = request(`${base}${path}`, {
      method,
      headers: payload === undefined ? {} : { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Parsed JSON in tests (shapes are asserted, not typed). */
// biome-ignore lint/suspicious/noExplicitAny: test-only view of response JSON
export type AnyJson = any;

/** POST of a JSON body; parses the JSON answer. */
export async function postJson(
  base: string,
  path: string,
  body: unknown,
): Promise<HttpResult & { json: AnyJson }> {
  const r = await http(base, 'POST', path, body);
  return { ...r, json: r.text === '' ? null : JSON.parse(r.text) };
}

/** One SSE event with the real ms since the request was sent when it arrived. */
export interface SseEvent {
  readonly data: string;
  readonly atMs: number;
}

/** A streamed response, split into `data:` events. */
export interface SseResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly events: SseEvent[];
  /** Real ms from sending to the end of the response. */
  readonly totalMs: number;
}

/**
 * POSTs a streaming request and collects its events.
 * @param onEvent called on each event (may destroy `req`)
 * @param onRequest called with the request once sent
 */
export function streamSse(
  base: string,
  path: string,
  body: unknown,
  onEvent?: (e: SseEvent, req: ClientRequest) => void,
  onRequest?: (req: ClientRequest) => void,
): Promise<SseResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const events: SseEvent[] = [];
    let raw = '';
    let pending = '';
    const req = request(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        raw += c;
        pending += c;
        for (let i = pending.indexOf('\n\n'); i >= 0; i = pending.indexOf('\n\n')) {
          const block = pending.slice(0, i);
          pending = pending.slice(i + 2);
          const e = {
            data: block.startsWith('data: ') ? block.slice(6) : `!${block}`,
            atMs: performance.now() - t0,
          };
          events.push(e);
          onEvent?.(e, req);
        }
      });
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          raw,
          events,
          totalMs: performance.now() - t0,
        });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', (err) => {
      if (req.destroyed) resolve({ status: 0, headers: {}, raw, events, totalMs: performance.now() - t0 });
      else reject(err);
    });
    onRequest?.(req);
    req.end(JSON.stringify(body));
  });
}

/** Parses Prometheus text into `name{labels}` → value (comments skipped). */
export function parseProm(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    const v = line.slice(at + 1);
    out.set(line.slice(0, at), v === '+Inf' ? Number.POSITIVE_INFINITY : Number(v));
  }
  return out;
}

/** The value of the first series named `name` (any labels). */
export function metric(samples: Map<string, number>, name: string): number | undefined {
  for (const [k, v] of samples) if (k === name || k.startsWith(`${name}{`)) return v;
  return undefined;
}

/** Polls `check` every 5 ms until it returns true or `timeoutMs` passes. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A chat request body. */
export function chat(maxTokens: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messages: [{ role: 'user', content: 'Say something.' }], max_tokens: maxTokens, ...extra };
}
