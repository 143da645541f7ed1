/**
 * The request path shared by every service: credential, body, the gate's
 * decision, parking, the backend leg, refusals, and the end of the
 * exchange. A Dialect supplies what differs between the loxilb rule
 * services and the SMG gateway (routes, decisions, refusal format,
 * endpoint choice).
 */
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
import type { BackendPools } from './backend-pools.js';
import type { AuthResult } from './credentials.js';
import type { DecisionRecord, DecisionSink, LogOutcome } from './decision-log.js';
import { Exchange, type ExchangeOwner } from './exchange.js';
import { type LegContext, type LegFailure, type LegOwner, startLeg, type Target } from './forward.js';
import { declaredLength, type HeaderMap, sendJson } from './http-util.js';
import type { AnyRequest, AnyResponse } from './listener.js';
import { openAiError } from './openai-error.js';
import { decodeBody, runPrefill } from './pd.js';
import { normaliseTarget } from './request-target.js';

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
  /** Called with every finished exchange's record. */
  onRecord?(r: DecisionRecord): void;
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

/** Handles the requests of one service. */
export class RequestHandler implements ExchangeOwner, LegOwner {
  readonly #legs: LegContext;

  constructor(
    public dialect: Dialect,
    readonly deps: HandlerDeps,
  ) {
    this.#legs = { pools: deps.pools, maxBodyBytes: deps.maxBodyBytes, owner: this };
  }

  /** Entry point for a request of either protocol. */
  handle(req: AnyRequest, res: AnyResponse, protocol: 'http1' | 'h2'): void {
    // One normalised target for every decision below and for the backend leg.
    const target = normaliseTarget(req.url ?? '/');
    if (target.ok) req.url = target.target;
    if (target.ok && this.dialect.local?.(req, res)) return;
    const d = this.deps;
    const ex = new Exchange(req, res, protocol, this.dialect.service, d.clock.now());
    ex.owner = this;
    res.on('close', () => this.#closed(ex));
    res.on('finish', () => this.#finished(ex));
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
      // A JWT is verified asynchronously: the body waits unread, and a client
      // that leaves meanwhile is recorded by #closed. A throw past this point
      // resets this one response rather than the process.
      auth
        .then((a) => {
          if (!ex.gone) this.#authenticated(ex, a);
        })
        .catch(() => ex.res.destroy());
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
    if (ex.inference && len !== null && len > 0 && len <= d.bufferBodyBytes) {
      this.#readBody(ex);
      return;
    }
    ex.bodyBuffered = len === 0 || (len !== null && len <= d.bufferBodyBytes);
    if (len === 0) ex.body = Buffer.alloc(0);
    this.#decide(ex);
  }

  #readBody(ex: Exchange): void {
    ex.state = 'reading';
    const chunks: Buffer[] = [];
    ex.req.on('data', (c: Buffer) => chunks.push(c));
    ex.req.on('error', () => {});
    ex.req.on('end', () => {
      if (ex.gone) return;
      ex.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      ex.bodyBuffered = true;
      this.#decide(ex);
    });
  }

  #decide(ex: Exchange): void {
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
        ex.permit = d.permit;
        this.#start(ex);
        return;
      case 'queued':
        ex.decision = 'queued';
        ex.reason = 'queued';
        ex.ticket = d.ticket;
        ex.state = 'queued';
        return;
      case 'refuse':
        ex.decision = 'refuse';
        this.#refuse(ex, d.refusal);
        return;
      case 'bypass': {
        ex.decision = 'bypass';
        ex.reason = d.counted ? 'bypass_non_inference' : 'ungated';
        const t = d.endpoint !== null ? this.dialect.target(d.endpoint) : this.dialect.pick();
        this.#run(ex, t ?? null);
        return;
      }
    }
  }

  /** A waiter's turn (called by the gate, synchronously). */
  granted(ex: Exchange, ticket: Ticket, permit: Permit): GrantOutcome {
    if (ex.gone || ex.state !== 'queued') return 'gone';
    ex.permit = permit;
    ex.state = 'granted';
    ex.reason = 'admitted';
    ex.queuedMs = this.deps.clock.now() - ticket.enqueuedAtMs;
    process.nextTick(() => this.#start(ex));
    return 'taken';
  }

  /** A waiter ended without a unit (timeout, drain). */
  ended(ex: Exchange, ticket: Ticket, refusal: Refusal): void {
    if (ex.gone) return;
    ex.queuedMs = refusal.queuedMs ?? this.deps.clock.now() - ticket.enqueuedAtMs;
    this.#refuse(ex, refusal);
  }

  #refuse(ex: Exchange, r: Refusal): void {
    ex.reason = r.reason;
    const resp = this.dialect.refusal(r);
    ex.error = resp.error;
    const outcome: LogOutcome =
      r.reason === 'queue_timeout' ? 'timed_out' : r.reason === 'drained' ? 'drained' : 'shed';
    this.#answer(ex, resp.status, resp.body, outcome, resp.headers);
  }

  #answer(ex: Exchange, status: number, body: unknown, outcome: LogOutcome, headers: HeaderMap): void {
    ex.outcome = outcome;
    ex.state = 'executing';
    sendJson(ex.res, ex.protocol, status, body, headers);
  }

  /** Runs an admitted request: a P/D request opens its prefill and decode legs first. */
  #start(ex: Exchange): void {
    if (this.dialect.pd && ex.permit !== null && ex.permit.endpointId === null && ex.inference) {
      void this.#runPd(ex, ex.permit);
      return;
    }
    this.#run(ex, null);
  }

  async #runPd(ex: Exchange, permit: Permit): Promise<void> {
    if (ex.gone) {
      ex.release();
      return;
    }
    let original: Record<string, unknown> | null = null;
    try {
      const v: unknown = JSON.parse((ex.body ?? Buffer.alloc(0)).toString('utf8'));
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
    ex.state = 'executing';
    const prefill = permit.openLeg('prefill');
    if (!('endpointId' in prefill)) {
      ex.release();
      this.#refuse(ex, prefill);
      return;
    }
    const pt = this.dialect.target(prefill.endpointId);
    const abort = new AbortController();
    ex.res.once('close', () => abort.abort());
    const r = pt
      ? await runPrefill(pt, ex.path, original, this.deps.pools, abort.signal)
      : ({ ok: false, why: 'error' } as const);
    prefill.close();
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
    if (ex.gone) {
      ex.release();
      return;
    }
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
    if (ex.gone) {
      ex.release();
      return;
    }
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
    ex.state = 'executing';
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
    // A leg cut because the client left says nothing about the endpoint's health.
    if (kind !== 'body_too_large' && !ex.gone) this.deps.legs?.legFailed(this.dialect.service, target.id);
    ex.outcome = 'failed';
    ex.reason = kind === 'body_too_large' ? 'body_too_large' : 'backend_error';
    if (ex.gone) return;
    if (!ex.res.headersSent) {
      const status = kind === 'body_too_large' ? 413 : 502;
      ex.error = kind === 'body_too_large' ? 'body_too_large' : 'backend_unavailable';
      sendJson(ex.res, ex.protocol, status, { error: ex.error }, { Connection: 'close' });
    } else {
      ex.res.destroy();
    }
  }

  legRelayed(_ex: Exchange, target: Target): void {
    this.deps.legs?.legOk(this.dialect.service, target.id);
  }

  #finished(ex: Exchange): void {
    ex.release();
    const outcome = ex.outcome ?? 'completed';
    this.#record(ex, outcome, ex.res.statusCode);
  }

  #closed(ex: Exchange): void {
    if (ex.state === 'done') return;
    ex.gone = true;
    if (ex.ticket !== null && ex.state === 'queued') this.dialect.cancel(ex.ticket);
    ex.backend?.abort();
    ex.release();
    const o = ex.outcome;
    this.#record(ex, o === 'failed' ? 'failed' : 'cancelled', ex.res.headersSent ? ex.res.statusCode : 0);
  }

  #record(ex: Exchange, outcome: LogOutcome, status: number): void {
    const r = ex.finish(outcome, status, this.deps.clock.now());
    if (r === null) return;
    this.deps.log?.write(r);
    this.deps.onRecord?.(r);
  }
}

function endedWithHeaders(req: AnyRequest): boolean {
  return 'stream' in req ? (req.stream as { endAfterHeaders?: boolean }).endAfterHeaders === true : false;
}
