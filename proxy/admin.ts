/**
 * The management API on the admin listener, in loxilb's shapes:
 *
 * - `POST   /netlox/v1/config/loadbalancer` create or replace a rule
 * - `GET    /netlox/v1/config/loadbalancer/all` every rule, with fc_effective
 * - `DELETE /netlox/v1/config/loadbalancer/externalipaddress/{ip}/port/{port}/protocol/{proto}`
 * - `PUT    /netlox/v1/maintenance` `{"enabled": bool}`; `GET` reads it back
 * - `GET    /metrics` Prometheus text exposition
 *
 * With a token every route needs `Authorization: Bearer <token>`. Invalid
 * input is answered 400 with a JSON body naming the field.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { type ApplyResult, isGateError, type MaintenanceView, type RuleView } from '../gate/index.js';

/** What the admin API drives. */
export interface Controller {
  apply(input: unknown): Promise<ApplyResult>;
  remove(key: string): Promise<void>;
  rules(): RuleView[];
  setMaintenance(enabled: boolean): MaintenanceView;
  maintenance(): MaintenanceView;
  metricsText(): string;
}

/** A refusal the controller raises that is not a GateError (e.g. the port is taken). */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Largest request body the admin API reads, in bytes. */
export const ADMIN_MAX_BODY = 1024 * 1024;

const DELETE_RE =
  /^\/netlox\/v1\/config\/loadbalancer\/externalipaddress\/([^/]+)\/port\/(\d+)\/protocol\/([a-z]+)\/?$/;

export interface AdminOptions {
  host: string;
  port: number;
  /** Bearer token; undefined leaves the API open. */
  token?: string;
}

/** The admin HTTP server. */
export class AdminServer {
  readonly #server: http.Server;
  readonly #token: Buffer | null;

  constructor(
    readonly ctl: Controller,
    readonly o: AdminOptions,
  ) {
    this.#token = o.token === undefined ? null : Buffer.from(o.token);
    this.#server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        send(res, 500, { code: 500, error: 'internal', message: String((err as Error)?.message ?? err) });
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.o.port, this.o.host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  get port(): number {
    const a = this.#server.address();
    return typeof a === 'object' && a !== null ? a.port : this.o.port;
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.#server.close(() => r());
      this.#server.closeAllConnections();
    });
  }

  #authorized(req: http.IncomingMessage): boolean {
    if (this.#token === null) return true;
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return false;
    const got = Buffer.from(m[1]!);
    return got.length === this.#token.length && timingSafeEqual(got, this.#token);
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!this.#authorized(req)) {
      send(
        res,
        401,
        { code: 401, error: 'unauthorized', message: 'a valid bearer token is required' },
        {
          'WWW-Authenticate': 'Bearer',
        },
      );
      return;
    }
    const url = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    if (url === '/metrics') {
      if (method !== 'GET' && method !== 'HEAD') return notAllowed(res, 'GET, HEAD');
      const text = this.ctl.metricsText();
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(text);
      return;
    }
    if (url === '/netlox/v1/config/loadbalancer/all') {
      if (method !== 'GET') return notAllowed(res, 'GET');
      send(res, 200, { lbAttr: this.ctl.rules() });
      return;
    }
    if (url === '/netlox/v1/config/loadbalancer') {
      if (method !== 'POST') return notAllowed(res, 'POST');
      const body = await readJson(req, res);
      if (body === undefined) return;
      try {
        const r = await this.ctl.apply(body);
        send(res, 200, {
          code: 200,
          message: 'success',
          key: r.key,
          outcome: r.outcome,
          warnings: r.warnings,
        });
      } catch (err) {
        sendError(res, err);
      }
      return;
    }
    const del = DELETE_RE.exec(url);
    if (del) {
      if (method !== 'DELETE') return notAllowed(res, 'DELETE');
      const key = `${decodeURIComponent(del[1]!)}:${del[2]}/${del[3]}`;
      try {
        await this.ctl.remove(key);
        send(res, 200, { code: 200, message: 'success', key });
      } catch (err) {
        sendError(res, err);
      }
      return;
    }
    if (url === '/netlox/v1/maintenance') {
      if (method === 'GET') {
        send(res, 200, this.ctl.maintenance());
        return;
      }
      if (method !== 'PUT') return notAllowed(res, 'GET, PUT');
      const body = await readJson(req, res);
      if (body === undefined) return;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return bad(res, 'SLUICE_E_FIELD_TYPE', 'body', 'expected a JSON object {"enabled": true|false}');
      }
      const o = body as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        if (k !== 'enabled')
          return bad(res, 'SLUICE_E_FIELD_UNKNOWN', k, `${k}: unknown field (expected enabled)`);
      }
      if (typeof o.enabled !== 'boolean') {
        return bad(
          res,
          'SLUICE_E_FIELD_TYPE',
          'enabled',
          `enabled: ${JSON.stringify(o.enabled)} is invalid: expected true or false`,
        );
      }
      send(res, 200, this.ctl.setMaintenance(o.enabled));
      return;
    }
    send(res, 404, { code: 404, error: 'not_found', message: `no route ${method} ${url}` });
  }
}

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function bad(res: http.ServerResponse, error: string, field: string, message: string): void {
  send(res, 400, { code: 400, error, field, message });
}

function notAllowed(res: http.ServerResponse, allow: string): void {
  send(res, 405, { code: 405, error: 'method_not_allowed', message: `allowed: ${allow}` }, { Allow: allow });
}

function sendError(res: http.ServerResponse, err: unknown): void {
  if (isGateError(err)) {
    const status = err.code === 'SLUICE_E_RULE_NOT_FOUND' ? 404 : 400;
    send(res, status, {
      code: status,
      error: err.code,
      field: err.field,
      value: err.value === undefined ? null : err.value,
      expected: err.expected,
      message: err.message,
    });
    return;
  }
  if (err instanceof AdminError) {
    send(res, err.status, { code: err.status, error: err.code, field: err.field, message: err.message });
    return;
  }
  throw err;
}

/** Reads and parses a JSON body; answers 400/413 itself and returns undefined on failure. */
async function readJson(req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > ADMIN_MAX_BODY) {
      send(
        res,
        413,
        { code: 413, error: 'body_too_large', field: 'body', message: `body above ${ADMIN_MAX_BODY} bytes` },
        {
          Connection: 'close',
        },
      );
      return undefined;
    }
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    bad(res, 'SLUICE_E_JSON', 'body', `body: malformed JSON (${(err as Error).message})`);
    return undefined;
  }
}
