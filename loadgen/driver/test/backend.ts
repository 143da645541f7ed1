/**
 * A tiny OpenAI-shaped backend for the driver's tests, on 127.0.0.1: chat completions streamed as
 * SSE (first token after `ttftMs`, then one token every `itlMs`, a usage chunk, `[DONE]`) or as one
 * JSON, `GET /v1/models`, HTTP/1.1 and HTTP/2 (h2c prior knowledge) on one port, and hooks to
 * refuse, stall or freeze. Every request is logged with its arrival time and protocol.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';

/** What the backend saw of a request. */
export interface SeenRequest {
  atMs: number;
  httpVersion: string;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | null;
  /** When the response ended or the client went away. */
  closedAtMs?: number;
}

/** A hook's answer: undefined serves normally. */
export type Override =
  | { status: number; headers?: Record<string, string>; body: string }
  | { delayMs: number }
  | undefined;

export interface BackendOptions {
  ttftMs?: number;
  itlMs?: number;
  /** Decide per request (n counts from 1). */
  hook?: (req: SeenRequest, n: number) => Override;
  /** Answers wait until this promise settles (a stall of the target). */
  gate?: () => Promise<void> | undefined;
}

export interface Backend {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the backend on an ephemeral loopback port. */
export async function startBackend(o: BackendOptions = {}): Promise<Backend> {
  const seen: SeenRequest[] = [];
  const t0 = performance.now();
  let n = 0;
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  const handle = (req: Req, res: Res): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const s: SeenRequest = {
        atMs: performance.now() - t0,
        httpVersion: req.httpVersion,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>),
      };
      seen.push(s);
      res.on('close', () => {
        s.closedAtMs = performance.now() - t0;
      });
      void serve(s, ++n, res);
    });
  };
  const serve = async (s: SeenRequest, k: number, res: Res): Promise<void> => {
    const w = res as http.ServerResponse;
    try {
      const ov = o.hook?.(s, k);
      const g = o.gate?.();
      if (g) await g;
      if (ov && 'status' in ov) {
        w.writeHead(ov.status, { 'content-type': 'application/json', ...ov.headers });
        w.end(ov.body);
        return;
      }
      if (ov && 'delayMs' in ov) await sleep(ov.delayMs);
      if (s.path === '/v1/models') {
        w.writeHead(200, { 'content-type': 'application/json' });
        w.end(JSON.stringify({ object: 'list', data: [{ id: 'test' }] }));
        return;
      }
      const max = Number(s.body?.max_tokens ?? 1);
      if (s.body?.stream !== true) {
        await sleep(o.ttftMs ?? 0);
        w.writeHead(200, { 'content-type': 'application/json' });
        w.end(
          JSON.stringify({
            choices: [
              { index: 0, message: { role: 'assistant', content: 'x'.repeat(max) }, finish_reason: 'length' },
            ],
            usage: { prompt_tokens: 1, completion_tokens: max },
          }),
        );
        return;
      }
      w.writeHead(200, { 'content-type': 'text/event-stream', 'x-loxilb-admission-inflight': '3' });
      w.flushHeaders?.();
      await sleep(o.ttftMs ?? 0);
      for (let i = 0; i < max; i++) {
        if (i > 0 && (o.itlMs ?? 0) > 0) await sleep(o.itlMs ?? 0);
        const last = i === max - 1;
        const chunk = {
          choices: [{ index: 0, delta: { content: 't' }, finish_reason: last ? 'length' : null }],
        };
        w.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      w.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: max } })}\n\n`);
      w.end('data: [DONE]\n\n');
    } catch {
      // the client went away
    }
  };
  const h1 = http.createServer({ keepAliveTimeout: 5000 }, handle);
  const h2 = http2.createServer({}, handle);
  h2.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  // One public port for both protocols: a TCP relay picks the internal server by the first bytes
  // (HTTP/2's connection preface starts "PRI"). Node's HTTP/2 reads the socket natively, so handing
  // it a socket with unshifted bytes would lose them; relaying keeps both servers plain.
  const listen = (srv: net.Server) =>
    new Promise<number>((r) => srv.listen(0, '127.0.0.1', () => r((srv.address() as net.AddressInfo).port)));
  const h1Port = await listen(h1);
  const h2Port = await listen(h2);
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', (buf) => {
      const port = buf.toString('latin1', 0, 3) === 'PRI' ? h2Port : h1Port;
      const up = net.connect(port, '127.0.0.1');
      sockets.add(up);
      up.on('close', () => {
        sockets.delete(up);
        socket.destroy();
      });
      up.on('error', () => up.destroy());
      socket.on('close', () => up.destroy());
      up.write(buf);
      socket.pipe(up);
      up.pipe(socket);
    });
  });
  await listen(server);
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
      h1.closeAllConnections();
      await Promise.all([server, h1, h2].map((srv) => new Promise<void>((r) => srv.close(() => r()))));
    },
  };
}
