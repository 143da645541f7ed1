/**
 * The emulator's HTTP/1.1 server (node:http, keep-alive): routes, request bodies with a size
 * limit, and the non-inference endpoints (`/v1/models`, `/health`, `/metrics`, `/admin/*`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { renderPrometheus } from '../../sim/engine/exposition.js';
import type { EmulatorContext, EmulatorStats } from './context.js';
import { ApiError } from './errors.js';
import { FaultError, type Faults, faultsToJson, NO_FAULTS, parseFaultsJson } from './faults.js';
import { handleInference } from './inference.js';
import { sendError, sendJson, sendText } from './respond.js';

/** Largest request body accepted, bytes (larger: 413). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Content type of the Prometheus text exposition format 0.0.4. */
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

type Handler = (ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse, body: string) => void;

/** Routes by path, then by method. */
const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  '/v1/chat/completions': { POST: (c, q, s, b) => handleInference(c, 'chat', q, s, b) },
  '/v1/completions': { POST: (c, q, s, b) => handleInference(c, 'completions', q, s, b) },
  '/v1/models': { GET: models },
  '/health': { GET: health },
  '/metrics': { GET: metrics },
  '/admin/faults': { GET: getFaults, POST: postFaults, DELETE: resetFaults },
  '/admin/stats': { GET: (c, _q, s) => sendJson(s, 200, statsOf(c)) },
};

/** Builds the HTTP server for an emulator context (not yet listening). */
export function createEmulatorServer(ctx: EmulatorContext, keepAliveTimeoutMs: number): Server {
  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => route(ctx, req, res));
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
}

/** The counters behind `stats()` and `GET /admin/stats`. */
export function statsOf(ctx: EmulatorContext): EmulatorStats {
  const h = ctx.host.stats();
  return {
    ...ctx.counters,
    active: ctx.active.size,
    running: ctx.host.engine.numRunning,
    waiting: ctx.host.engine.numWaiting,
    tokens: h.tokens,
    steps: h.steps,
    aborted: h.aborted,
    lagMsMean: h.steps === 0 ? 0 : h.lagMsTotal / h.steps,
    lagMsMax: h.lagMsMax,
  };
}

function route(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0] as string;
  const methods = ROUTES[path];
  if (methods === undefined) {
    req.resume();
    sendError(res, new ApiError(404, `${req.method} ${path}: no such route`));
    return;
  }
  const handler = methods[req.method ?? ''];
  if (handler === undefined) {
    req.resume();
    const allow = Object.keys(methods).join(', ');
    sendError(res, new ApiError(405, `${req.method} ${path}: method not allowed; use ${allow}`), { allow });
    return;
  }
  readBody(req, res, (body) => {
    try {
      handler(ctx, req, res, body);
    } catch (err) {
      sendError(res, new ApiError(500, `internal error: ${(err as Error).message}`));
    }
  });
}

/** Reads the body as UTF-8 up to {@link MAX_BODY_BYTES}; answers 413 beyond it. */
function readBody(req: IncomingMessage, res: ServerResponse, done: (body: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      over = true;
      chunks.length = 0;
      sendError(res, new ApiError(413, `(body): more than ${MAX_BODY_BYTES} bytes`, 'body'), {
        connection: 'close',
      });
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (!over) done(Buffer.concat(chunks).toString('utf8'));
  });
  req.on('error', () => {
    over = true;
  });
}

function models(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, 200, {
    object: 'list',
    data: [
      {
        id: ctx.modelName,
        object: 'model',
        created: ctx.startedAtS,
        owned_by: 'vllm',
        root: ctx.modelName,
        parent: null,
        max_model_len: ctx.maxModelLen,
      },
    ],
  });
}

function health(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse): void {
  if (ctx.faults.health === 'down') {
    sendError(res, new ApiError(503, 'injected fault: health down'));
    return;
  }
  res.writeHead(200, { 'content-length': 0 });
  res.end();
}

function metrics(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse): void {
  if (ctx.faults.metricsOutage) {
    sendText(res, 503, 'injected fault: metrics outage\n', 'text/plain; charset=utf-8');
    return;
  }
  sendText(res, 200, renderPrometheus(ctx.host.engine.metrics(), ctx.metricsVersion), PROMETHEUS_TEXT);
}

function getFaults(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, 200, faultsToJson(ctx.faults));
}

function postFaults(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse, body: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    sendError(res, new ApiError(400, `(body): invalid JSON: ${(err as Error).message}`, 'body'));
    return;
  }
  let update: Partial<Faults>;
  try {
    update = parseFaultsJson(parsed);
  } catch (err) {
    if (!(err instanceof FaultError)) throw err;
    sendError(res, new ApiError(400, err.message, err.field));
    return;
  }
  ctx.faults = { ...ctx.faults, ...update };
  sendJson(res, 200, faultsToJson(ctx.faults));
}

function resetFaults(ctx: EmulatorContext, _req: IncomingMessage, res: ServerResponse): void {
  ctx.faults = NO_FAULTS;
  sendJson(res, 200, faultsToJson(ctx.faults));
}
