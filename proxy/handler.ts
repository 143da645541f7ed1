/**
 * The request path shared by every service: credential, body, the gate's
 * decision, parking, the backend leg, refusals, and the end of the
 * exchange. A Dialect supplies what differs between the loxilb rule
 * services and the SMG gateway (routes, decisions, refusal format,
 * endpoint choice).
 */

import type http from 'node:http';
import type {
  AdmissionHeaderValues,
  AdmissionRequest,
  Clock,
  Decision,
  GateHost,
  GrantOutcome,
  Permit,
  Refusal,
  Ticket,
} from '../gate/index.js';
import { markDeny } from './audit.js';
import type { BackendPools } from './backend-pools.js';
import type { BodyBudget } from './body-budget.js';
import type { AuthResult } from './credentials.js';
import type { DecisionRecord, DecisionSink, RequestOutcome } from './decision-log.js';
import { Exchange, type ExchangeOwner } from './exchange.js';
import { type LegContext, type LegFailure, type LegOwner, startLeg, type Target } from './forward.js';
import { declaredLength, type HeaderMap, sendJson } from './http-util.js';
import { jsonDepthExceeds } from './json-bounds.js';
import type { AnyRequest, AnyResponse } from './listener.js';
import { LiveLegs } from './live-legs.js';
import { openAiError } from './openai-error.js';
import { decodeBody, runPrefill } from './pd.js';
import type { PolicyAnswer } from './policy/http-mapping.js';
import { DEFERRED_PATH, type PolicyOwner, type ProxyPolicy } from './policy/proxy-policy.js';
import { normaliseTarget, type TargetResult } from './request-target.js';
import { watchSocket } from './socket-watch.js';

/** A refusal as the dialect answers it. */
export interface RefusalResponse {
  status: number;
  headers: HeaderMap;
  body: unknown;
  /** The error code the body carries, for the log. */
  error: string;
}

/** What differs between the loxilb services and the SMG gateway. */
export interface Dialect {
  /** Service label of the log and metrics. */
  readonly service: string;
  isInference(path: string): boolean;
  /** Checks the request's credential (401 before the gate when refused); a JWT answers asynchronously. */
  authenticate(path: string, headers: AnyRequest['headers']): AuthResult | Promise<AuthResult>;
  admit(req: AdmissionRequest, ex: Exchange): Decision;
  cancel(ticket: Ticket): void;
  refusal(r: Refusal): RefusalResponse;
  /** The endpoint the gate chose, by `IP:port`. */
  target(endpointId: string): Target | undefined;
  /** An endpoint chosen outside the gate (bypass of an ungated rule, SMG workers), or null when none is usable. */
  pick(): Target | null;
  /** Whether requests are P/D requests (pd_disagg_mode). */
  readonly pd: boolean;
  /** The answer when no endpoint can take an admitted request. */
  unavailable?(): RefusalResponse;
  /** Answers locally (e.g. SMG's /metrics); true when handled. */
  local?(req: AnyRequest, res: AnyResponse): boolean;
}

/** Endpoint health as the backend legs see it (feeds the circuit breaker). */
export interface LegObserver {
  legFailed(service: string, endpointId: string): void;
  legOk(service: string, endpointId: string): void;
}

export interface HandlerDeps {
  clock: Clock;
  /** The pooled clients to the endpoints. */
  pools: BackendPools;
  log: DecisionSink | null;
  legs: LegObserver | null;
  /** Bodies with a Content-Length up to this are read before the decision (bodyBuffered). */
  bufferBodyBytes: number;
  /** Larger bodies are refused 413. */
  maxBodyBytes: number;
  /** Deepest nesting of arrays and objects in a JSON body the proxy parses (P/D requests); deeper: 400. */
  maxJsonDepth: number;
  /** Longest silence of a request body being read, in ms (408 body_timeout); 0: none. */
  bodyTimeoutMs: number;
  /** The process-wide bytes of bodies read before their decision. */
  bodyBudget: BodyBudget;
  /** Called with every finished exchange's record. */
  onRecord?(r: DecisionRecord): void;
  /** The policy layer (`--policy`), or null: read per request, so a proxy without one pays nothing. */
  policy?: () => ProxyPolicy | null;
  /** Told of an error that escaped an exchange's code (that exchange was failed 500). @default a line on stderr */
  onInternalError?(err: unknown, service: string, req: AnyRequest): void;
}

/** The gate host for every exchange: turns and endings go to the exchange's handler. */
export const exchangeHost: GateHost = {
  granted(ticket: Ticket, permit: Permit): GrantOutcome {
    const ex = ticket.context as Exchange;
    return ex.owner ? ex.owner.granted(ex, ticket, permit) : 'gone';
  },
  ended(ticket: Ticket, refusal: Refusal): void {
    const ex = ticket.context as Exchange;
    ex.owner?.ended(ex, ticket, refusal);
  },
};

/** A request's own answer when the proxy failed it (`internal_error`). */
const INTERNAL_ERROR = { error: 'internal_error', message: 'the proxy failed this request; see its log' };

/** Handles the requests of one service. */
export class RequestHandler implements ExchangeOwner, LegOwner, PolicyOwner {
  readonly #legs: LegContext;

  constructor(
    public dialect: Dialect,
    readonly deps: HandlerDeps,
  ) {
    this.#legs = {
      pools: deps.pools,
      maxBodyBytes: deps.maxBodyBytes,
      bodyTimeoutMs: deps.bodyTimeoutMs,
      owner: this,
      live: new LiveLegs(),
    };
  }

  /** `endpointId` was declared dead: its legs that stay silent for `quietMs` are cut. */
  cutQuietLegs(endpointId: string, quietMs: number): void {
    this.#legs.live.cutQuiet(endpointId, quietMs);
  }

  /** Entry point for a request of either protocol. */
  handle(req: AnyRequest, res: AnyResponse, protocol: 'http1' | 'h2'): void {
    // One normalised target for every decision below and for the backend leg.
    const target = normaliseTarget(req.url ?? '/');
    if (target.ok) req.url = target.target;
    try {
      if (target.ok && this.dialect.local?.(req, res)) return;
    } catch (err) {
      this.#report(err, this.dialect.service, req);
      if (!res.headersSent) sendJson(res, protocol, 500, INTERNAL_ERROR, { Connection: 'close' });
      else res.destroy();
      return;
    }
    const d = this.deps;
    const ex = new Exchange(req, res, protocol, this.dialect.service, d.clock.now());
    ex.owner = this;
    const life = ex.life;
    res.on('close', () => life.gone());
    // An h2 stream reset emits the response's finish (then close) without the response having been ended.
    res.on('finish', () => (res.writableEnded ? life.answered() : life.gone()));
    if (protocol === 'http1') {
      // A pipelined response queued behind another never emits close or finish when the socket closes.
      const done = watchSocket(req.socket, life);
      res.once('close', done);
    }
    this.#guard(ex, () => this.#begin(ex, target));
  }

  #begin(ex: Exchange, target: TargetResult): void {
    const { req } = ex;
    if (!target.ok) {
      ex.decision = 'rejected';
      ex.reason = ex.error = 'invalid_request_target';
      this.#answer(ex, 400, openAiError(target.message, 'invalid_request_error', ex.error), 'failed', {
        Connection: 'close',
      });
      return;
    }
    const path = ex.path;
    ex.inference = this.dialect.isInference(path);
    const auth = this.dialect.authenticate(path, req.headers);
    if (auth instanceof Promise) {
      // A JWT is verified asynchronously: the body waits unread, and a client that
      // leaves meanwhile ends the exchange (its life is over). A throw past this
      // point fails this one exchange, never the process.
      auth.then(
        (a) =>
          this.#guard(ex, () => {
            if (!ex.gone) this.#authenticated(ex, a);
          }),
        (err: unknown) => this.#internalError(ex, err),
      );
      return;
    }
    this.#authenticated(ex, auth);
  }

  /** Continues a request once its credential is checked: 401, 413, body, decision. */
  #authenticated(ex: Exchange, auth: AuthResult): void {
    const { req, protocol } = ex;
    const d = this.deps;
    if (!auth.ok) {
      ex.decision = 'unauthorized';
      ex.reason = 'unauthorized';
      ex.error = 'unauthorized';
      this.#answer(ex, 401, openAiError(auth.message, 'invalid_request_error', 'unauthorized'), 'shed', {
        'WWW-Authenticate': 'Bearer',
        ...(declaredLength(req.headers, protocol, endedWithHeaders(req)) === 0
          ? {}
          : { Connection: 'close' }),
      });
      return;
    }
    ex.tenant = auth.tenant;
    if (auth.tenant !== undefined) ex.claims = auth.claims ?? {};
    const policy = d.policy?.() ?? null;
    if (policy !== null && ex.path.startsWith(DEFERRED_PATH)) {
      this.#deferredStatus(ex, policy);
      return;
    }
    const len = declaredLength(req.headers, protocol, endedWithHeaders(req));
    if (len !== null && len > d.maxBodyBytes) {
      ex.decision = 'rejected';
      ex.reason = 'body_too_large';
      ex.error = 'body_too_large';
      this.#answer(ex, 413, { error: 'body_too_large', max_bytes: d.maxBodyBytes }, 'failed', {
        Connection: 'close',
      });
      return;
    }
    // A policy reads the request's cost from its body, so it needs the body whole before the
    // decision: one declared above --buffer-body-bytes is refused, one of unknown length (HTTP/1.1
    // chunked, HTTP/2 without content-length) is read up to it, its bytes reserved as they come.
    const costed = ex.inference && policy !== null;
    if (costed && len !== null && len > d.bufferBodyBytes) {
      this.#bodyUnread(ex, d.bufferBodyBytes);
      return;
    }
    if (costed && len === null) {
      this.#readBody(ex, d.bufferBodyBytes);
      return;
    }
    if (ex.inference && len !== null && len > 0 && len <= d.bufferBodyBytes) {
      if (!d.bodyBudget.take(ex, len)) {
        this.#reject(ex, 503, 'proxy_body_memory_full', 'shed', { 'Retry-After': '1' });
        return;
      }
      this.#readBody(ex, null);
      return;
    }
    ex.bodyBuffered = len === 0 || (len !== null && len <= d.bufferBodyBytes);
    if (len === 0) ex.body = Buffer.alloc(0);
    if (ex.life.bodyRead()) this.#decide(ex);
  }

  /**
   * Reads `ex`'s body whole, then decides. `cap` (bytes) bounds a body of unknown length, whose
   * bytes are reserved in the body budget as they arrive (null: the declared length is reserved).
   */
  #readBody(ex: Exchange, cap: number | null): void {
    const chunks: Buffer[] = [];
    let read = 0;
    const ms = this.deps.bodyTimeoutMs;
    // A body silent for `ms` is answered 408 and its connection closed.
    const timer =
      ms > 0
        ? setTimeout(() => {
            if (!ex.gone && ex.life.phase === 'reading') this.#reject(ex, 408, 'body_timeout', 'failed', {});
          }, ms).unref()
        : null;
    ex.res.once('close', () => {
      if (timer !== null) clearTimeout(timer);
    });
    ex.req.on('data', (c: Buffer) => {
      if (ex.life.phase !== 'reading') return;
      timer?.refresh();
      read += c.length;
      if (cap !== null) {
        if (read > cap) {
          chunks.length = 0;
          this.#guard(ex, () => this.#bodyUnread(ex, cap));
          return;
        }
        if (!this.deps.bodyBudget.take(ex, c.length)) {
          chunks.length = 0;
          this.#guard(ex, () =>
            this.#reject(ex, 503, 'proxy_body_memory_full', 'shed', { 'Retry-After': '1' }),
          );
          return;
        }
      }
      chunks.push(c);
    });
    ex.req.on('error', () => {});
    ex.req.on('end', () =>
      this.#guard(ex, () => {
        if (timer !== null) clearTimeout(timer);
        this.deps.bodyBudget.give(ex);
        // After an h2 reset the request's end may come after the response's close: nothing to decide.
        if (!ex.life.bodyRead()) return;
        ex.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        ex.bodyBuffered = true;
        this.#decide(ex);
      }),
    );
  }

  #decide(ex: Exchange): void {
    const policy = ex.inference && ex.policyLog === null ? (this.deps.policy?.() ?? null) : null;
    if (policy !== null) {
      policy.submit(ex, this, policy.claimsOf(ex));
      return;
    }
    this.#gateDecide(ex);
  }

  /** `GET`/`HEAD`/`DELETE /sluice/deferred/ID`: a deferred request's status, for its own tenant only. */
  #deferredStatus(ex: Exchange, policy: ProxyPolicy): void {
    ex.decision = 'bypass';
    ex.reason = 'policy_status';
    const m = /^\/sluice\/deferred\/([A-Za-z0-9_-]{1,128})$/.exec(ex.path);
    const method = ex.method;
    const close =
      declaredLength(ex.req.headers, ex.protocol, endedWithHeaders(ex.req)) === 0
        ? {}
        : { Connection: 'close' };
    if (m === null) {
      ex.error = 'policy_deferred_not_found';
      this.#answer(ex, 404, { error: ex.error, message: 'not a deferred request id' }, 'completed', close);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
      ex.error = 'method_not_allowed';
      this.#answer(ex, 405, { error: ex.error, allowed: 'GET, HEAD, DELETE' }, 'completed', {
        ...close,
        Allow: 'GET, HEAD, DELETE',
      });
      return;
    }
    const a = policy.status(method, m[1]!, policy.claimsOf(ex));
    ex.error = a.error === '' ? null : a.error;
    this.#answer(ex, a.status, a.body, 'completed', { ...a.headers, ...close });
  }

  /** The policy gave `ex` its seats: on to the rule's gate. */
  policyRun(ex: Exchange): void {
    this.#guard(ex, () => {
      if (ex.gone) return;
      const pool = ex.policyPool;
      if (pool === null) {
        this.#gateDecide(ex);
        return;
      }
      // Degraded to a fallback pool: straight to that rule's endpoint, not through this rule's gate.
      ex.decision = 'bypass';
      ex.reason = 'policy_degrade_pool';
      ex.life.running();
      this.#run(ex, pool.to?.target ?? null);
    });
  }

  /** The service whose breakers a leg of `ex` reports to: the fallback pool's for a degraded one. */
  #legService(ex: Exchange): string {
    return ex.policyPool?.to?.service ?? this.dialect.service;
  }

  /** The policy answers `ex` itself. */
  policyAnswer(ex: Exchange, a: PolicyAnswer, outcome: RequestOutcome): void {
    this.#guard(ex, () => {
      if (ex.gone) return;
      ex.decision =
        a.status === 202 ? 'bypass' : a.error.startsWith('policy_invalid') ? 'rejected' : 'refuse';
      ex.reason = a.error;
      ex.error = a.status === 202 ? null : a.error;
      this.#answer(ex, a.status, a.body, outcome, a.headers);
    });
  }

  #gateDecide(ex: Exchange): void {
    const d = this.dialect.admit(
      {
        inference: ex.inference,
        protocol: ex.protocol,
        bodyBuffered: ex.bodyBuffered,
        ...(ex.tenant === undefined ? {} : { tenant: ex.tenant }),
        pd: this.dialect.pd && ex.inference,
      },
      ex,
    );
    switch (d.kind) {
      case 'admit':
        ex.decision = 'admit';
        ex.reason = d.observe ? d.observe.outcome : 'admitted';
        if (ex.take(d.permit)) this.#start(ex);
        return;
      case 'queued':
        ex.decision = 'queued';
        ex.reason = 'queued';
        ex.ticket = d.ticket;
        ex.life.queued();
        return;
      case 'refuse':
        ex.decision = 'refuse';
        this.#refuse(ex, d.refusal);
        return;
      case 'bypass': {
        ex.decision = 'bypass';
        ex.reason = d.counted ? 'bypass_non_inference' : 'ungated';
        ex.life.running();
        const t = d.endpoint !== null ? this.dialect.target(d.endpoint) : this.dialect.pick();
        this.#run(ex, t ?? null);
        return;
      }
    }
  }

  /** A waiter's turn (called by the gate, synchronously). */
  granted(ex: Exchange, ticket: Ticket, permit: Permit): GrantOutcome {
    if (!ex.life.canTakeTurn || !ex.take(permit)) return 'gone';
    ex.reason = 'admitted';
    ex.queuedMs = this.deps.clock.now() - ticket.enqueuedAtMs;
    process.nextTick(() => this.#guard(ex, () => this.#start(ex)));
    return 'taken';
  }

  /** A waiter ended without a unit (timeout, drain). */
  ended(ex: Exchange, ticket: Ticket, refusal: Refusal): void {
    if (ex.gone) return;
    ex.queuedMs = refusal.queuedMs ?? this.deps.clock.now() - ticket.enqueuedAtMs;
    this.#guard(ex, () => this.#refuse(ex, refusal));
  }

  cancelWait(_ex: Exchange, ticket: Ticket): void {
    this.dialect.cancel(ticket);
  }

  over(ex: Exchange, gone: boolean): void {
    const policy = this.deps.policy?.() ?? null;
    if (policy !== null) {
      const outcome = gone ? (ex.outcome === 'failed' ? 'failed' : 'cancelled') : (ex.outcome ?? 'completed');
      try {
        policy.ended(ex, outcome, ex.res.headersSent ? ex.res.statusCode : 0);
      } catch (err) {
        this.#report(err, ex.service, ex.req);
      }
    }
    if (gone) {
      const failed = ex.outcome === 'failed';
      this.#record(ex, failed ? 'failed' : 'cancelled', ex.res.headersSent ? ex.res.statusCode : 0);
    } else this.#record(ex, ex.outcome ?? 'completed', ex.res.statusCode);
  }

  /**
   * Runs a step of `ex`; an error it throws fails that exchange alone (500
   * `internal_error`, or a reset once its head went out), its unit released.
   */
  #guard(ex: Exchange, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.#internalError(ex, err);
    }
  }

  #internalError(ex: Exchange, err: unknown): void {
    this.#report(err, ex.service, ex.req);
    if (ex.gone) return;
    ex.outcome = 'failed';
    ex.reason = 'internal_error';
    ex.error = 'internal_error';
    if (ex.life.canTakeTurn && ex.ticket !== null) this.dialect.cancel(ex.ticket);
    ex.life.answering();
    ex.release();
    ex.backend?.abort();
    try {
      if (!ex.res.headersSent) {
        sendJson(ex.res, ex.protocol, 500, INTERNAL_ERROR, { Connection: 'close' });
        return;
      }
    } catch {
      // Fall through to the reset.
    }
    ex.res.destroy();
    ex.life.gone();
  }

  #refuse(ex: Exchange, r: Refusal): void {
    ex.reason = r.reason;
    const resp = this.dialect.refusal(r);
    ex.error = resp.error;
    const outcome: RequestOutcome =
      r.reason === 'queue_timeout' ? 'timed_out' : r.reason === 'drained' ? 'drained' : 'shed';
    this.#answer(ex, resp.status, resp.body, outcome, resp.headers);
  }

  #report(err: unknown, service: string, req: AnyRequest): void {
    try {
      if (this.deps.onInternalError) this.deps.onInternalError(err, service, req);
      else process.stderr.write(`${internalErrorLine(err, service, req)}\n`);
    } catch {
      // The report must not stop the exchange from being failed.
    }
  }

  /** 413 `policy_body_unread`: with a policy, a body above `cap` (--buffer-body-bytes) cannot be costed. */
  #bodyUnread(ex: Exchange, cap: number): void {
    ex.policyLog = { disposition: 'invalid', error: 'policy_body_unread' };
    this.#reject(
      ex,
      413,
      'policy_body_unread',
      'failed',
      {},
      {
        message: `with a policy, an inference request body may be at most --buffer-body-bytes (${cap} bytes): its cost is read from it`,
        max_bytes: cap,
      },
    );
  }

  /**
   * Refuses before the gate (decision `rejected`, reason and error `code`, body `{ error: code,
   * ...extra }`), closing the connection.
   */
  #reject(
    ex: Exchange,
    status: number,
    code: string,
    outcome: RequestOutcome,
    headers: HeaderMap,
    extra: Record<string, unknown> = {},
  ): void {
    this.deps.bodyBudget.give(ex);
    ex.decision = 'rejected';
    ex.reason = code;
    ex.error = code;
    this.#answer(ex, status, { error: code, ...extra }, outcome, { ...headers, Connection: 'close' });
  }

  #answer(ex: Exchange, status: number, body: unknown, outcome: RequestOutcome, headers: HeaderMap): void {
    ex.outcome = outcome;
    ex.life.answering();
    sendJson(ex.res, ex.protocol, status, body, headers);
  }

  /** Runs an admitted request: a P/D request opens its prefill and decode legs first. */
  #start(ex: Exchange): void {
    if (this.dialect.pd && ex.permit !== null && ex.permit.endpointId === null && ex.inference) {
      this.#runPd(ex, ex.permit).catch((err: unknown) => this.#internalError(ex, err));
      return;
    }
    this.#run(ex, null);
  }

  async #runPd(ex: Exchange, permit: Permit): Promise<void> {
    if (ex.gone) return;
    const raw = ex.body ?? Buffer.alloc(0);
    const maxDepth = this.deps.maxJsonDepth;
    if (jsonDepthExceeds(raw, maxDepth)) {
      ex.release();
      ex.error = 'json_too_deep';
      ex.reason = 'json_too_deep';
      this.#answer(ex, 400, { error: 'json_too_deep', max_depth: maxDepth }, 'failed', {});
      return;
    }
    let original: Record<string, unknown> | null = null;
    try {
      const v: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) original = v as Record<string, unknown>;
    } catch {
      original = null;
    }
    if (original === null) {
      ex.release();
      ex.error = 'invalid_request';
      this.#answer(
        ex,
        400,
        { error: 'invalid_request', message: 'a P/D request needs a JSON object body' },
        'failed',
        {},
      );
      return;
    }
    const prefill = permit.openLeg('prefill');
    if (!('endpointId' in prefill)) {
      ex.release();
      this.#refuse(ex, prefill);
      return;
    }
    const pt = this.dialect.target(prefill.endpointId);
    const abort = new AbortController();
    // The life cuts the prefill leg like any backend leg when the client leaves.
    ex.backend = { abort: () => abort.abort() };
    let r: Awaited<ReturnType<typeof runPrefill>>;
    try {
      r = pt
        ? await runPrefill(pt, ex.path, original, this.deps.pools, abort.signal, maxDepth)
        : { ok: false, why: 'error' };
    } finally {
      prefill.close();
      ex.backend = null;
    }
    if (!r.ok) {
      ex.release();
      if (pt && r.why !== 'aborted') this.deps.legs?.legFailed(this.dialect.service, pt.id);
      if (ex.gone) return;
      ex.error = 'backend_unavailable';
      ex.reason = 'backend_error';
      this.#answer(ex, 502, { error: 'backend_unavailable', leg: 'prefill' }, 'failed', {
        Connection: 'close',
      });
      return;
    }
    if (ex.gone) return;
    const decode = permit.openLeg('decode');
    if (!('endpointId' in decode)) {
      ex.release();
      this.#refuse(ex, decode);
      return;
    }
    const dt = this.dialect.target(decode.endpointId);
    ex.body = decodeBody(original, r.kvTransferParams);
    this.#run(ex, dt ?? null);
  }

  #run(ex: Exchange, bypassTarget: Target | null): void {
    if (ex.gone) return;
    let target: Target | null = bypassTarget;
    if (ex.permit !== null && target === null) {
      const id = ex.permit.endpointId;
      target = (id !== null ? this.dialect.target(id) : this.dialect.pick()) ?? null;
    }
    if (target === null) {
      ex.release();
      const u = this.dialect.unavailable?.() ?? {
        status: 503,
        headers: {},
        body: { error: 'no_endpoint' },
        error: 'no_endpoint',
      };
      ex.error = u.error;
      ex.reason = 'no_endpoint';
      this.#answer(ex, u.status, u.body, 'failed', u.headers);
      return;
    }
    ex.endpoint = target.id;
    if (ex.protocol === 'http1' && ex.decision === 'queued' && !ex.bodyBuffered) {
      // A request parked with its body unread: its connection closes after the answer either way.
      (ex.res as http.ServerResponse).shouldKeepAlive = false;
    }
    startLeg(ex, target, this.#legs);
  }

  legExpose(ex: Exchange): AdmissionHeaderValues | null {
    return ex.permit === null ? null : ex.permit.exposeHeaders();
  }

  legFirstData(ex: Exchange): void {
    const permit = ex.permit;
    if (permit === null || ex.ttftMs !== null) return;
    ex.ttftMs = this.deps.clock.now() - permit.admittedAtMs;
    permit.firstDataEvent();
  }

  legFailed(ex: Exchange, target: Target, kind: LegFailure): void {
    ex.release();
    // A leg cut because the client left says nothing about the endpoint's health
    // (nor one cut because its breaker is already open).
    if (kind !== 'body_too_large' && kind !== 'body_timeout' && kind !== 'endpoint_down' && !ex.gone) {
      this.deps.legs?.legFailed(this.#legService(ex), target.id);
    }
    const f = LEG_FAILURES[kind];
    ex.outcome = 'failed';
    ex.reason = f.reason;
    if (ex.gone) return;
    if (!ex.res.headersSent) {
      ex.error = f.error;
      sendJson(ex.res, ex.protocol, f.status, { error: ex.error }, { Connection: 'close' });
    } else {
      ex.res.destroy();
    }
  }

  legRelayed(ex: Exchange, target: Target): void {
    this.deps.legs?.legOk(this.#legService(ex), target.id);
  }

  #record(ex: Exchange, outcome: RequestOutcome, status: number): void {
    this.deps.bodyBudget.give(ex);
    const r = ex.finish(outcome, status, this.deps.clock.now());
    if (r === null) return;
    markDeny(r, ex.body);
    this.deps.log?.write(r);
    this.deps.onRecord?.(r);
  }
}

/** One JSON line about an error that escaped an exchange. */
export function internalErrorLine(err: unknown, service: string, req: AnyRequest): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return `sluice proxy: ${JSON.stringify({
    event: 'internal_error',
    service,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    error: `${e.name}: ${e.message}`,
    stack: e.stack ?? null,
  })}`;
}

/** What the client is told, and the log says, for each way a leg fails before its head. */
const LEG_FAILURES: Record<LegFailure, { status: number; error: string; reason: string }> = {
  before_head: { status: 502, error: 'backend_unavailable', reason: 'backend_error' },
  mid_body: { status: 502, error: 'backend_unavailable', reason: 'backend_error' },
  timeout: { status: 504, error: 'backend_timeout', reason: 'backend_timeout' },
  endpoint_down: { status: 502, error: 'backend_unavailable', reason: 'endpoint_down' },
  body_timeout: { status: 408, error: 'body_timeout', reason: 'body_timeout' },
  body_too_large: { status: 413, error: 'body_too_large', reason: 'body_too_large' },
};

function endedWithHeaders(req: AnyRequest): boolean {
  return 'stream' in req ? (req.stream as { endAfterHeaders?: boolean }).endAfterHeaders === true : false;
}
