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
 * input is answered 400 with a JSON body naming the field. A `Host` that is
 * not the listener, a cross-origin `Origin` (403) and a body that is not
 * `application/json` (415) are refused first (`admin-guard.ts`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { type ApplyResult, isGateError, type MaintenanceView, type RuleView } from '../gate/index.js';
import { type AdminAddress, hostAllowed, isJsonContentType, originAllowed } from './admin-guard.js';
import { jsonDepthExceeds } from './json-bounds.js';

/** What the admin API drives. */
export interface Controller {
  apply(input: unknown): Promise<ApplyResult>;
  remove(key: string): Promise<void>;
  rules(): RuleView[];
  setMaintenance(enabled: boolean): MaintenanceView;
  maintenance(): MaintenanceView;
  metricsText(): string;
  /** The policy in force, or null without one. */
  policyView?(): unknown;
  /** Swaps the policy (throws AdminError when refused, the old one staying in force). */
  policySwap?(body: unknown): unknown;
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

/** Deepest nesting of a JSON body the admin API parses (a rule nests 4 levels). */
export const ADMIN_MAX_JSON_DEPTH = 32;

const DELETE_RE =
  /^\/netlox\/v1\/config\/loadbalancer\/externalipaddress\/([^/]+)\/port\/(\d+)\/protocol\/([a-z]+)\/?$/;

export interface AdminOptions {
  host: string;
  port: number;
  /** Bearer token; undefined leaves the API open. */
  token?: string;
  /** Host names (besides the listener's address) requests may name in `Host`. @default [] */
  hostNames?: readonly string[];
  /** Deepest JSON nesting of a body; deeper is 400 SLUICE_E_JSON_DEPTH. @default ADMIN_MAX_JSON_DEPTH */
  maxJsonDepth?: number;
}

/** The admin HTTP server. */
export class AdminServer {
  readonly #server: http.Server;
  readonly #token: Buffer | null;

  constructor(
    readonly ctl: Controller,
    readonly o: AdminOptions,
  ) {
    this.#token = o.token === undefined ? null : digest(o.token);
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
    // Digests of equal length: the comparison reveals neither the token nor its length.
    return timingSafeEqual(digest(m[1]!), this.#token);
  }

  #address(): AdminAddress {
    const a = this.#server.address();
    const bound = typeof a === 'object' && a !== null ? a : { address: this.o.host, port: this.o.port };
    return {
      address: bound.address,
      port: bound.port,
      configured: this.o.host,
      names: (this.o.hostNames ?? []).map((n) => n.toLowerCase()),
    };
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host, this.#address())) {
      send(res, 403, {
        code: 403,
        error: 'SLUICE_E_ADMIN_HOST',
        field: 'Host',
        message: `Host ${JSON.stringify(req.headers.host ?? '')} is not this admin listener (allow a name with --admin-host-name)`,
      });
      return;
    }
    if (!originAllowed(req.headers.origin, req.headers.host)) {
      send(res, 403, {
        code: 403,
        error: 'SLUICE_E_ADMIN_ORIGIN',
        field: 'Origin',
        message: 'cross-origin requests are refused',
      });
      return;
    }
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
    if (/%(?![0-9A-Fa-f]{2})/.test(req.url ?? '')) {
      return bad(res, 'SLUICE_E_URL', 'url', 'malformed percent-escape in the URL');
    }
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
      const body = await this.#readJson(req, res);
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
      const ip = decodeOrNull(del[1]!);
      if (ip === null) return bad(res, 'SLUICE_E_URL', 'url', 'malformed percent-escape in the URL');
      const key = `${ip}:${del[2]}/${del[3]}`;
      try {
        await this.ctl.remove(key);
        send(res, 200, { code: 200, message: 'success', key });
      } catch (err) {
        sendError(res, err);
      }
      return;
    }
    if (url === '/sluice/policy') {
      if (method === 'GET') {
        const v = this.ctl.policyView?.() ?? null;
        if (v === null)
          send(res, 404, {
            code: 404,
            error: 'SLUICE_E_POLICY_OFF',
            message: 'the proxy runs without a policy',
          });
        else send(res, 200, v);
        return;
      }
      if (method !== 'PUT') return notAllowed(res, 'GET, PUT');
      const body = await this.#readJson(req, res);
      if (body === undefined) return;
      try {
        const r = this.ctl.policySwap?.(body);
        if (r === undefined) throw new AdminError(409, 'SLUICE_E_POLICY_OFF', 'policy', 'no policy layer');
        send(res, 200, { code: 200, message: 'success', ...(r as object) });
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
      const body = await this.#readJson(req, res);
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

  #readJson(req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
    return readJson(req, res, this.o.maxJsonDepth ?? ADMIN_MAX_JSON_DEPTH);
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function decodeOrNull(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
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
async function readJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  maxDepth: number,
): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) {
    send(
      res,
      415,
      {
        code: 415,
        error: 'SLUICE_E_CONTENT_TYPE',
        field: 'Content-Type',
        message: `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is refused: expected application/json`,
      },
      { Connection: 'close' },
    );
    return undefined;
  }
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
  const raw = Buffer.concat(chunks);
  const text = raw.toString('utf8');
  if (jsonDepthExceeds(raw, maxDepth)) {
    bad(res, 'SLUICE_E_JSON_DEPTH', 'body', `body: JSON nested deeper than ${maxDepth} levels`);
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    bad(res, 'SLUICE_E_JSON', 'body', `body: malformed JSON (${(err as Error).message})`);
    return undefined;
  }
}
