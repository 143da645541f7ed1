/**
 * Test helpers: in-test backends (node:http, OpenAI-shaped, counting
 * concurrency), a client that reports status/headers/body/timing, the
 * admin API, and a metrics reader. Everything on 127.0.0.1, ephemeral ports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { LoxiProxy, type ProxyOptions } from '../proxy.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A backend that answers every request with `total` bytes written `piece` by `piece`, honouring backpressure. */
export interface BulkBackend {
  server: http.Server;
  /** Bytes handed to `res.write` so far. */
  readonly written: number;
  /** Whether the response has ended (its last byte flushed). */
  readonly finished: boolean;
}

/** Starts nothing: a {@link BulkBackend} whose responses have the given headers (listen on it yourself). */
export function bulkBackend(total: number, piece: Buffer, headers: http.OutgoingHttpHeaders): BulkBackend {
  const state = { written: 0, finished: false };
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, headers);
    const pump = (): void => {
      while (state.written < total) {
        state.written += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end(() => {
        state.finished = true;
      });
    };
    pump();
  });
  return {
    server,
    get written() {
      return state.written;
    },
    get finished() {
      return state.finished;
    },
  };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const a = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return a.port;
}

/** Behaviour of a test backend for one request (from the JSON body). */
export interface BackendRequestBody {
  hold_ms?: number;
  stream?: boolean;
  /** Reset the connection after the first event. */
  reset_mid?: boolean;
  user?: string;
}

/** An OpenAI-shaped backend that counts concurrency and receipts. */
export class TestBackend {
  port = 0;
  active = 0;
  maxActive = 0;
  receipts: string[] = [];
  /** The request target of every request, as received. */
  urls: string[] = [];
  waiting = 0;
  metricsOk = true;
  healthy = true;
  /** Extra response headers. */
  headers: Record<string, string> = {};
  readonly server: http.Server;

  constructor(readonly name = 'b') {
    this.server = http.createServer((q, s) => this.#handle(q, s));
    this.server.keepAliveTimeout = 60_000;
  }

  async start(port = 0): Promise<this> {
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = req.url ?? '/';
    this.urls.push(url);
    if (url.startsWith('/metrics')) {
      if (!this.metricsOk) {
        res.writeHead(500);
        res.end('down');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        `# HELP vllm:num_requests_waiting Number of requests waiting.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="m",engine="0"} ${this.waiting}.0\n`,
      );
      return;
    }
    if (url.startsWith('/health')) {
      res.writeHead(this.healthy ? 200 : 503);
      res.end(this.healthy ? 'ok' : 'down');
      return;
    }
    if (req.method === 'GET' && url.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'm' }] }));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      let j: BackendRequestBody = {};
      try {
        j = JSON.parse(body || '{}') as BackendRequestBody;
      } catch {
        /* keep empty */
      }
      const hold = j.hold_ms ?? 100;
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      this.receipts.push(j.user ?? '');
      let done = false;
      const finish = (): void => {
        if (!done) {
          done = true;
          this.active--;
        }
      };
      res.on('close', finish);
      const head = { 'x-backend': this.name, 'x-loxilb-admission-limit': '999', ...this.headers };
      if (j.stream) {
        res.writeHead(200, { ...head, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const chunk = (t: string): string =>
          `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
        const t1 = setTimeout(() => {
          if (done) return;
          res.write(chunk('hi'));
          if (j.reset_mid) setTimeout(() => res.socket?.destroy(), 20);
        }, 20);
        const t2 = setTimeout(() => {
          if (!done) {
            res.write(chunk(' there'));
            res.write(
              `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } })}\n\n`,
            );
            res.end('data: [DONE]\n\n');
          }
          finish();
        }, hold);
        res.on('close', () => {
          clearTimeout(t1);
          clearTimeout(t2);
        });
      } else {
        const t = setTimeout(() => {
          res.writeHead(200, { ...head, 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'c',
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }],
              usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
            }),
          );
          finish();
        }, hold);
        res.on('close', () => clearTimeout(t));
      }
    });
  }
}

/** A client's view of one response. */
export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
  firstChunkMs: number | null;
  error?: string;
}

export interface InferOptions {
  hold?: number;
  stream?: boolean;
  user?: string;
  path?: string;
  method?: string;
  agent?: http.Agent | false;
  headers?: Record<string, string>;
  body?: string;
  resetMid?: boolean;
  /** Called with the request once its socket is assigned. */
  onRequest?: (req: http.ClientRequest) => void;
}

/** Sends one HTTP/1.1 request. */
export function infer(port: number, o: InferOptions = {}): Promise<Reply> {
  const method = o.method ?? 'POST';
  const body =
    o.body ??
    (method === 'POST'
      ? JSON.stringify({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          stream: o.stream ?? false,
          user: o.user,
          hold_ms: o.hold,
          reset_mid: o.resetMid,
        })
      : undefined);
  const t0 = Date.now();
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: o.path ?? '/v1/chat/completions',
        method,
        agent: o.agent ?? false,
        headers: {
          ...(body !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
            : {}),
          ...o.headers,
        },
      },
      (res) => {
        let data = '';
        let first: number | null = null;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (first === null) first = Date.now() - t0;
          data += c;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: data,
            ms: Date.now() - t0,
            firstChunkMs: first,
          }),
        );
        res.on('error', (e) =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: data,
            ms: Date.now() - t0,
            firstChunkMs: first,
            error: (e as NodeJS.ErrnoException).code ?? String(e),
          }),
        );
      },
    );
    req.on('error', (e) =>
      resolve({
        status: 0,
        headers: {},
        body: '',
        ms: Date.now() - t0,
        firstChunkMs: null,
        error: (e as NodeJS.ErrnoException).code ?? String(e),
      }),
    );
    o.onRequest?.(req);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Sends one request on an h2c session. */
export function inferH2(
  session: http2.ClientHttp2Session,
  o: { hold?: number; stream?: boolean; path?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const body = JSON.stringify({ model: 'm', stream: o.stream ?? false, hold_ms: o.hold });
  const t0 = Date.now();
  return new Promise((resolve) => {
    const s = session.request({
      ':method': 'POST',
      ':path': o.path ?? '/v1/chat/completions',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...o.headers,
    });
    let headers: http.IncomingHttpHeaders = {};
    let status = 0;
    let data = '';
    let first: number | null = null;
    s.on('response', (h) => {
      status = Number(h[':status']);
      headers = h as http.IncomingHttpHeaders;
    });
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      if (first === null) first = Date.now() - t0;
      data += c;
    });
    s.on('end', () => resolve({ status, headers, body: data, ms: Date.now() - t0, firstChunkMs: first }));
    s.on('error', (e) =>
      resolve({ status, headers, body: data, ms: Date.now() - t0, firstChunkMs: first, error: String(e) }),
    );
    s.end(body);
  });
}

/** Calls the admin API. */
export function admin(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  o: { raw?: string; token?: string } = {},
): Promise<{ status: number; json: unknown; body: string }> {
  const payload = o.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent: false,
        headers: {
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        },
      },
      (res) => {
        let d = '';
        res.on('data', (c) => {
          d += c;
        });
        res.on('end', () => {
          let json: unknown = null;
          try {
            json = JSON.parse(d);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, json, body: d });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.end(payload);
    else req.end();
  });
}

/** Sum of a metric's samples whose label text matches `filter`. */
export function metricSum(
  text: string,
  name: string,
  filter: (labels: string) => boolean = () => true,
): number | null {
  let sum = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    const m = /^([^{\s]+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name || !filter(m[2] ?? '')) continue;
    seen = true;
    sum += Number(m[3]);
  }
  return seen ? sum : null;
}

/** A rule on 127.0.0.1:`port` over `backends`. */
export function rule(
  port: number,
  fc: Record<string, unknown>,
  backends: { port: number }[],
  extra: Record<string, unknown> = {},
): { serviceArguments: Record<string, unknown>; endpoints: Record<string, unknown>[] } {
  return {
    serviceArguments: {
      externalIP: '127.0.0.1',
      port,
      protocol: 'tcp',
      mode: 4,
      sse_mode: true,
      ...extra,
      ...fc,
    },
    endpoints: backends.map((b) => ({ endpointIP: '127.0.0.1', targetPort: b.port, weight: 1 })),
  };
}

/** Starts a proxy with its admin on an ephemeral port and quiet telemetry. */
export async function startProxy(o: ProxyOptions = {}): Promise<LoxiProxy> {
  const p = new LoxiProxy({
    adminHost: '127.0.0.1',
    adminPort: 0,
    env: {},
    warn: () => {},
    // No sec.ai.deny lines on the test output unless a test asks for them.
    audit: { perSecond: 0 },
    monitor: { healthIntervalMs: 0, scrapeIntervalMs: 0, ...o.monitor },
    ...o,
  });
  await p.start();
  return p;
}

/** Adds a rule through the admin API; returns the service port. */
export async function addRule(p: LoxiProxy, r: ReturnType<typeof rule>): Promise<number> {
  const res = await admin(p.adminPort, 'POST', '/netlox/v1/config/loadbalancer', r);
  if (res.status !== 200) throw new Error(`rule refused: ${res.status} ${res.body}`);
  return r.serviceArguments.port as number;
}

/** Waits until `cond` holds, polling every 20 ms, at most `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(20);
  }
  return cond();
}

/** In-flight and anomaly counts from /metrics. */
/** Waits until nothing is in flight or queued on the proxy, then expects no bookkeeping anomaly. */
export async function expectSettled(p: LoxiProxy): Promise<void> {
  expect(
    await until(async () => (await bookkeeping(p)).inflight === 0 && (await bookkeeping(p)).queued === 0),
  ).toBe(true);
  expect((await bookkeeping(p)).anomalies).toBe(0);
}

export async function bookkeeping(
  p: LoxiProxy,
): Promise<{ inflight: number; queued: number; anomalies: number }> {
  const text = p.metricsText();
  return {
    inflight: metricSum(text, 'loxilb_ai_admission_inflight', (l) => l.includes('role="service"')) ?? 0,
    queued: metricSum(text, 'loxilb_ai_admission_queued') ?? 0,
    anomalies:
      metricSum(text, 'loxilb_ai_admission_anomalies_total', (l) =>
        /kind="(underflow|unknown_permit)"/.test(l),
      ) ?? 0,
  };
}

export type { http2 };

/** A `sluice proxy` child process: its combined output so far, its stderr alone, and its exit. */
export interface ProxyProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  out(): string;
  /** stderr so far. */
  err(): string;
  exit: Promise<number | null>;
}

const SLUICE_BIN = new URL('../../bin/sluice.js', import.meta.url).pathname;

/**
 * Spawns `sluice proxy args` (behind `prefix`, e.g. taskset, when given), with `rules` written to a
 * temporary `--config` file first when given.
 */
export function spawnProxy(
  args: string[],
  o: { rules?: unknown[]; env?: NodeJS.ProcessEnv; prefix?: string[] } = {},
): ProxyProcess {
  const extra: string[] = [];
  if (o.rules !== undefined) {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-proxy-')), 'rules.json');
    writeFileSync(file, JSON.stringify({ lbAttr: o.rules }));
    extra.push('--config', file);
  }
  const argv = [process.execPath, SLUICE_BIN, 'proxy', ...extra, ...args];
  const prefix = o.prefix ?? [];
  const child = spawn(
    prefix[0] ?? argv[0]!,
    [...prefix.slice(1), ...(prefix.length ? argv : argv.slice(1))],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: o.env ?? process.env,
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => {
    out += c;
  });
  child.stderr!.on('data', (c) => {
    out += c;
    err += c;
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out: () => out, err: () => err, exit };
}
