/**
 * The policy behind `sluice proxy --policy FILE`: one {@link PolicyGate} for the process, in front
 * of the loxilb gate of every rule. An inference request is decided by the policy first (its
 * envelope from the verified credential, the normalised path and the headers a client may use to
 * lower its priority or shorten its deadline; its cost from the body); admitted work then goes
 * through the rule's own gate exactly as without a policy. Queued requests wait inside the proxy,
 * deferred ones in the defer store (SQLite with `--defer-db`) and are replayed to a backend by the
 * drain; rejections are answered with an honest reason (http-mapping.ts).
 */
import { randomBytes } from 'node:crypto';
import {
  type AdmissionEnvelope,
  type DeferredItem,
  type DeferStore,
  deriveEnvelope,
  type EnvelopeSources,
  MemoryDeferStore,
  type Policy,
  type PolicyConditions,
  PolicyGate,
  type PolicyLease,
  type PolicyQueueExit,
  type PolicySwapReport,
  type PolicyWaiter,
  parsePolicy,
} from '../../gate/index.js';
import type { Target } from '../backend-pools.js';
import type { RequestOutcome } from '../decision-log.js';
import type { Exchange } from '../exchange.js';
import { SqliteDeferStore } from './defer-sqlite.js';
import { type DeferredRequest, decodePayload, encodePayload, storedHeaders } from './deferred-payload.js';
import { EpochClock } from './epoch-clock.js';
import { type PolicyAnswer, queueExitAnswer, rejectAnswer } from './http-mapping.js';
import { DEADLINE_HEADER, replay } from './replay.js';
import { capMaxTokens, parseBody, type RequestCost, requestCost } from './request-cost.js';

/** Where the policy sends an exchange next; implemented by the request handler. */
export interface PolicyOwner {
  /** The policy gave it seats: run it through the rule's gate now. */
  policyRun(ex: Exchange): void;
  /** The policy answers it itself (defer, reject, expiry, a bad body). */
  policyAnswer(ex: Exchange, a: PolicyAnswer, outcome: RequestOutcome): void;
}

/** Header a client sets to ask for the emergency lane (granted only to an eligible credential). */
export const EMERGENCY_HEADER = 'x-sluice-emergency';
/** The path prefix of deferred items' status. */
export const DEFERRED_PATH = '/sluice/deferred/';
/** Largest replayed response body kept for the status endpoint, bytes. */
export const MAX_KEPT_RESULT_BYTES = 65536;
/** Longest a replay may wait for its backend when its deadline is further away, ms. */
export const MAX_REPLAY_MS = 300_000;

interface LiveCtx {
  readonly kind: 'live';
  readonly ex: Exchange;
  readonly owner: PolicyOwner;
  readonly json: Record<string, unknown>;
  readonly cost: RequestCost;
  readonly className: string;
  readonly arrivedAtMs: number;
}
interface ReplayCtx {
  readonly kind: 'replay';
  readonly item: DeferredItem;
  readonly req: DeferredRequest;
}
type Ctx = LiveCtx | ReplayCtx;

/** What the policy keeps per live exchange. */
interface LiveState {
  ctx: LiveCtx;
  lease: PolicyLease<Ctx> | null;
  waiter: PolicyWaiter<Ctx> | null;
}

/** Options of a {@link ProxyPolicy}. */
export interface ProxyPolicyOptions {
  /** The policy file's text and name (for its messages). */
  readonly text: string;
  readonly fileName: string;
  /** `--defer-db FILE`; required when a class of the policy defers. */
  readonly deferDb?: string;
  /** `synchronous` of the defer database (default FULL: a 202 survives power loss; NORMAL: a process crash only). */
  readonly deferSync?: 'FULL' | 'NORMAL';
  /** A backend endpoint of the service named `service` (its `externalIP:port`), or null. */
  readonly target: (service: string) => Target | null;
  readonly warn: (line: string) => void;
  /** Drain loop period, ms (default 100). */
  readonly drainPeriodMs?: number;
  /** The system's conditions (conditions.ts) at each decision, dispatch and drain step (default: healthy). */
  readonly conditions?: () => PolicyConditions;
  /** A healthy endpoint of the rule a degrade pool names, with that rule's service, or null. */
  readonly poolTarget?: (pool: string) => { service: string; target: Target } | null;
  /**
   * Checks a policy against the rules served before it is put in force (a swap).
   * @throws PolicyNameAmbiguous naming the field
   */
  readonly checkNames?: (p: Policy) => void;
}

/** A policy name (degrade pool, dependency) that two rules carry: refused. */
export class PolicyNameAmbiguous extends Error {
  readonly code = 'SLUICE_E_POLICY_NAME';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** A policy that defers without a durable store: refused. */
export class PolicyDeferStoreMissing extends Error {
  readonly code = 'SLUICE_E_POLICY_DEFER_DB';
}

/** Classes of `p` whose defer is enabled. */
function deferringClasses(p: Policy): string[] {
  return p.classes.filter((c) => c.defer !== undefined).map((c) => c.name);
}

/** The process's policy layer. */
export class ProxyPolicy {
  readonly clock = new EpochClock();
  readonly gate: PolicyGate<Ctx>;
  readonly store: DeferStore;
  readonly #o: ProxyPolicyOptions;
  readonly #live = new WeakMap<Exchange, LiveState>();
  readonly #replays = new Set<Promise<void>>();
  #version = 1;
  #source: { text: string; fileName: string };
  #closed = false;
  #stopping = false;

  /**
   * @throws PolicyError for a bad file; PolicyDeferStoreMissing when a class defers and there is
   *   no --defer-db; DeferDbError for a defer database that cannot be used
   */
  constructor(o: ProxyPolicyOptions) {
    this.#o = o;
    const policy = parsePolicy(o.text, o.fileName);
    const deferring = deferringClasses(policy);
    if (deferring.length > 0 && o.deferDb === undefined)
      throw new PolicyDeferStoreMissing(
        `--policy ${o.fileName}: class ${deferring.join(', ')} defers (defer.enabled) but no --defer-db FILE is given; deferred requests would be lost on a restart`,
      );
    this.store =
      o.deferDb === undefined
        ? new MemoryDeferStore()
        : SqliteDeferStore.open(o.deferDb, o.deferSync === undefined ? {} : { synchronous: o.deferSync });
    if (this.store instanceof SqliteDeferStore && this.store.recovered > 0)
      o.warn(
        `sluice proxy: ${JSON.stringify({ event: 'defer_recovered', items: this.store.recovered, file: o.deferDb })}`,
      );
    this.#source = { text: o.text, fileName: o.fileName };
    this.gate = new PolicyGate<Ctx>({
      policy,
      clock: this.clock,
      store: this.store,
      deferId: () => `d${randomBytes(16).toString('base64url')}`,
      ...(o.drainPeriodMs === undefined ? {} : { drainPeriodMs: o.drainPeriodMs }),
      ...(o.conditions === undefined ? {} : { conditions: o.conditions }),
      events: {
        onDispatch: (lease) => this.#dispatched(lease),
        onExpire: (ctx, why) => this.#expired(ctx, why),
        onDrain: (item) => {
          const req = decodePayload(item.payload);
          if (req === undefined) {
            o.warn(`sluice proxy: ${JSON.stringify({ event: 'defer_payload_unreadable', id: item.id })}`);
            return undefined;
          }
          return { kind: 'replay', item, req };
        },
        deferPayload: (ctx) => (ctx.kind === 'live' ? this.#payload(ctx) : ctx.item.payload),
      },
    });
  }

  get policy(): Policy {
    return this.gate.policy;
  }

  /** 1 for the file the proxy started with, +1 for each accepted swap. */
  get version(): number {
    return this.#version;
  }

  get source(): { text: string; fileName: string } {
    return this.#source;
  }

  /**
   * The claims the envelope reads for `ex`: its verified claims with the policy's tenant claim set
   * to the proxy's verified tenant (the API key's record or `--jwt-tenant-claim`), so the rule's
   * gate and the policy see one tenant; undefined when the credential named none (anonymous).
   */
  claimsOf(ex: Exchange): Readonly<Record<string, unknown>> | undefined {
    if (ex.tenant === undefined) return undefined;
    return { ...(ex.claims ?? {}), [this.gate.policy.document.envelope.tenant_claim]: ex.tenant };
  }

  /**
   * Decides an inference exchange whose credential was verified (`claims`: the verified claims,
   * or undefined for a request without a tenant). Answers it, queues it or hands it to `owner`.
   */
  submit(ex: Exchange, owner: PolicyOwner, claims: Readonly<Record<string, unknown>> | undefined): void {
    const bad = (
      status: number,
      error: string,
      detail: string,
      extra: Record<string, unknown> = {},
    ): void => {
      ex.policyLog = { disposition: 'invalid', error };
      owner.policyAnswer(
        ex,
        { status, headers: {}, body: { error, message: detail, ...extra }, error },
        'failed',
      );
    };
    if (this.#stopping) {
      owner.policyAnswer(ex, queueExitAnswer('closed', 'none', 0), 'drained');
      return;
    }
    // Under a policy the handler reads every inference body whole or refuses it (413
    // policy_body_unread) before this call.
    if (!ex.bodyBuffered || ex.body === null) throw new Error('policy submit before the body was read');
    const parsed = parseBody(ex.body);
    if (!parsed.ok) {
      bad(400, 'policy_invalid_body', parsed.detail);
      return;
    }
    const c = requestCost(ex.body.length, parsed.json);
    if (!c.ok) {
      bad(400, 'policy_invalid_body', `${c.field}: ${c.detail}`, { field: c.field });
      return;
    }
    const now = this.clock.now();
    const header = (name: string): string | undefined => {
      const v = ex.req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const r = deriveEnvelope(
      this.gate.policy,
      {
        ...(claims === undefined ? {} : { claims }),
        path: ex.path.split('?')[0]!,
        header,
        cost: { promptTokens: c.cost.promptTokens, maxOutputTokens: c.cost.maxOutputTokens },
        ...(header(EMERGENCY_HEADER) === 'true' ? { emergency: true } : {}),
      },
      now,
    );
    if (!r.ok) {
      bad(400, 'policy_invalid_envelope', `${r.problem.field}: ${r.problem.detail}`, {
        field: r.problem.field,
      });
      return;
    }
    const env = r.envelope;
    ex.policyLog = envelopeLog(env, r.sources, c.cost, now);
    const ctx: LiveCtx = {
      kind: 'live',
      ex,
      owner,
      json: parsed.json,
      cost: c.cost,
      className: env.className,
      arrivedAtMs: now,
    };
    const state: LiveState = { ctx, lease: null, waiter: null };
    this.#live.set(ex, state);
    const d = this.gate.submit(env, ctx);
    const log = ex.policyLog;
    log.disposition = d.kind;
    switch (d.kind) {
      case 'admit':
        state.lease = d.lease;
        log.seats = d.lease.seats;
        log.lane = d.lease.lane;
        this.#run(state, d.lease);
        return;
      case 'degrade':
        state.lease = d.lease;
        log.seats = d.lease.seats;
        log.degrade =
          d.mode.kind === 'max_tokens' ? `max_tokens:${d.mode.max_output_tokens}` : `pool:${d.mode.pool}`;
        this.#run(state, d.lease);
        return;
      case 'queue':
        state.waiter = d.waiter;
        log.expected_wait_ms = d.expectedWaitMs === undefined ? null : Math.round(d.expectedWaitMs);
        return;
      case 'defer': {
        log.defer_id = d.item.id;
        const location = `${DEFERRED_PATH}${d.item.id}`;
        owner.policyAnswer(
          ex,
          {
            status: 202,
            headers: { Location: location },
            body: {
              id: d.item.id,
              state: 'pending',
              status_url: location,
              class: d.item.className,
              backlog: d.backlog,
              deadline: new Date(d.item.deadlineMs).toISOString(),
            },
            error: 'policy_deferred',
          },
          'completed',
        );
        return;
      }
      case 'reject': {
        log.reason = d.reason;
        const a = rejectAnswer(d.reason, d.retryAfter, d.detail, env.className);
        owner.policyAnswer(ex, a, 'shed');
        return;
      }
    }
  }

  /** Sets up the backend leg of admitted work: the remaining deadline, a capped max_tokens. */
  #run(state: LiveState, lease: PolicyLease<Ctx>): void {
    const { ex, owner, json, cost } = state.ctx;
    const max = lease.maxOutputTokens;
    if (max !== undefined && max < cost.maxOutputTokens) {
      const body = capMaxTokens(json, cost, max);
      if (body !== null) {
        ex.body = body;
        if (ex.policyLog !== null) ex.policyLog.max_tokens_sent = max;
      }
    }
    if (lease.mode?.kind === 'pool') {
      const to = this.#o.poolTarget?.(lease.mode.pool) ?? null;
      ex.policyPool = { pool: lease.mode.pool, to };
      if (ex.policyLog !== null) ex.policyLog.pool_service = to === null ? null : to.service;
    }
    const left = Math.max(0, Math.floor(lease.deadlineMs - this.clock.now()));
    ex.backendHeaders = [DEADLINE_HEADER, String(left)];
    owner.policyRun(ex);
  }

  #dispatched(lease: PolicyLease<Ctx>): void {
    const ctx = lease.ctx;
    if (ctx.kind === 'replay') {
      this.#replay(ctx, lease);
      return;
    }
    const state = this.#live.get(ctx.ex);
    if (state === undefined || ctx.ex.gone) {
      this.gate.release(lease, { outcome: 'cancelled', clientConnected: false });
      return;
    }
    state.waiter = null;
    state.lease = lease;
    if (ctx.ex.policyLog !== null) {
      ctx.ex.policyLog.seats = lease.seats;
      ctx.ex.policyLog.queued_ms = Math.round(lease.admittedAtMs - lease.arrivedAtMs);
    }
    ctx.ex.queuedMs = lease.admittedAtMs - lease.arrivedAtMs;
    // Out of the dispatch loop: the rule's gate and the leg run on the next tick.
    process.nextTick(() => {
      if (ctx.ex.gone) return;
      this.#run(state, lease);
    });
  }

  #expired(ctx: Ctx, why: PolicyQueueExit): void {
    if (ctx.kind === 'replay') return;
    const state = this.#live.get(ctx.ex);
    if (state !== undefined) state.waiter = null;
    if (ctx.ex.gone) return;
    if (ctx.ex.policyLog !== null) ctx.ex.policyLog.queue_exit = why;
    const waited = this.clock.now() - ctx.arrivedAtMs;
    ctx.ex.queuedMs = waited;
    ctx.owner.policyAnswer(ctx.ex, queueExitAnswer(why, ctx.className, waited), 'timed_out');
  }

  /**
   * The exchange is over: its seats go back (completed, failed, or cancelled when the client left),
   * or it leaves the queue.
   */
  ended(ex: Exchange, outcome: RequestOutcome, status: number): void {
    const state = this.#live.get(ex);
    if (state === undefined) return;
    this.#live.delete(ex);
    if (state.waiter !== null) {
      this.gate.cancel(state.waiter);
      state.waiter = null;
    }
    const lease = state.lease;
    if (lease === null || lease.released) return;
    state.lease = null;
    const done =
      outcome === 'cancelled'
        ? 'cancelled'
        : outcome === 'completed' && status > 0 && status < 500
          ? 'completed'
          : 'failed';
    const actual =
      ex.promptTokens !== null && ex.outputTokens !== null
        ? { actual: { promptTokens: ex.promptTokens, outputTokens: ex.outputTokens } }
        : {};
    this.gate.release(lease, {
      outcome: done,
      clientConnected: outcome !== 'cancelled',
      status,
      ...actual,
    });
  }

  #payload(ctx: LiveCtx): Uint8Array {
    const ex = ctx.ex;
    return encodePayload({
      service: ex.service,
      method: ex.method,
      path: ex.path,
      headers: storedHeaders(ex.req.rawHeaders, this.gate.policy.retry.idempotencyHeader),
      body: ex.body ?? Buffer.alloc(0),
    });
  }

  #replay(ctx: ReplayCtx, lease: PolicyLease<Ctx>): void {
    const { item, req } = ctx;
    const target = this.#o.target(req.service);
    const finish = (status: number, body?: Buffer, contentType?: string): void => {
      if (this.#closed) return;
      try {
        // The gate ends the item in the store with the answer (finishWithResult) as it releases.
        this.gate.release(lease, {
          outcome: status > 0 && status < 500 ? 'completed' : 'failed',
          // The answer is kept for its client (the status endpoint): still wanted, not work done
          // after a disconnect. Counted useful on time when stored before its deadline.
          clientConnected: true,
          useful: status > 0 && status < 500,
          status,
          result: {
            ...(body === undefined ? {} : { body }),
            ...(contentType === undefined ? {} : { contentType }),
          },
        });
      } catch (e) {
        this.#o.warn(
          `sluice proxy: ${JSON.stringify({ event: 'defer_finish_failed', id: item.id, error: (e as Error).message })}`,
        );
      }
    };
    if (target === null) {
      finish(
        503,
        Buffer.from(JSON.stringify({ error: 'no_endpoint', service: req.service })),
        'application/json',
      );
      return;
    }
    const remaining = item.deadlineMs - this.clock.now();
    const p = replay(req, target, {
      idempotencyKey: item.idempotencyKey ?? item.id,
      deferId: item.id,
      remainingMs: remaining,
      timeoutMs: Math.max(1, Math.min(MAX_REPLAY_MS, remaining)),
      maxBodyBytes: MAX_KEPT_RESULT_BYTES,
    }).then((r) => {
      if (r.ok) finish(r.status, r.body, r.contentType);
      else
        finish(
          r.why === 'timeout' ? 504 : 502,
          Buffer.from(
            JSON.stringify({
              error: r.why === 'timeout' ? 'backend_timeout' : 'backend_unavailable',
              detail: r.detail,
            }),
          ),
          'application/json',
        );
    });
    this.#replays.add(p);
    void p.finally(() => this.#replays.delete(p));
  }

  /**
   * Puts a new policy in force at once; a refused one (PolicyError, or a defer the store cannot
   * keep) throws and the old one stays.
   */
  swap(text: string, fileName: string): { version: number; report: PolicySwapReport } {
    const policy = parsePolicy(text, fileName);
    const deferring = deferringClasses(policy);
    if (deferring.length > 0 && !(this.store instanceof SqliteDeferStore))
      throw new PolicyDeferStoreMissing(
        `class ${deferring.join(', ')} defers (defer.enabled) but the proxy runs without --defer-db; deferred requests would be lost on a restart`,
      );
    this.#o.checkNames?.(policy);
    const report = this.gate.swap(policy);
    this.#version++;
    this.#source = { text, fileName };
    return { version: this.#version, report };
  }

  /**
   * The status endpoint: `GET` (or `HEAD`) tells a deferred item's state and, once done, the
   * backend's answer; `DELETE` cancels it while pending. Only the tenant that deferred it sees it:
   * another tenant (or an unknown id) gets the same 404, so ids cannot be probed. A store that
   * throws answers 503 `policy_defer_store_unavailable`.
   */
  status(method: string, id: string, claims: Readonly<Record<string, unknown>> | undefined): PolicyAnswer {
    const notFound: PolicyAnswer = {
      status: 404,
      headers: {},
      body: { error: 'policy_deferred_not_found', message: `no deferred request ${id} for this credential` },
      error: 'policy_deferred_not_found',
    };
    const tenantClaim = this.gate.policy.document.envelope.tenant_claim;
    const t = claims?.[tenantClaim];
    const tenant = typeof t === 'string' && t !== '' ? t : 'anonymous';
    try {
      return this.#status(method, id, tenant, notFound);
    } catch (e) {
      // The store failed (a full disk, a dead file): say so, not 500, and not that the item is gone.
      return {
        status: 503,
        headers: { 'Cache-Control': 'no-store' },
        body: {
          error: 'policy_defer_store_unavailable',
          message: `the defer store does not answer: ${e instanceof Error ? e.message : String(e)}`,
          recovery: 'unknown',
        },
        error: 'policy_defer_store_unavailable',
      };
    }
  }

  #status(method: string, id: string, tenant: string, notFound: PolicyAnswer): PolicyAnswer {
    const rec = this.store.get(id);
    if (rec === undefined || rec.item.tenant !== tenant) return notFound;
    if (method === 'DELETE') {
      if (!this.gate.cancelDeferred(id))
        return {
          status: 409,
          headers: {},
          body: { error: 'policy_deferred_not_pending', id, state: this.store.get(id)?.state ?? rec.state },
          error: 'policy_deferred_not_pending',
        };
      return { status: 200, headers: {}, body: { id, state: 'cancelled' }, error: '' };
    }
    const result = this.store instanceof SqliteDeferStore ? this.store.result(id) : undefined;
    const body: Record<string, unknown> = {
      id,
      state: rec.state,
      class: rec.item.className,
      deferred_at: new Date(rec.item.deferredAtMs).toISOString(),
      deadline: new Date(rec.item.deadlineMs).toISOString(),
      updated_at: new Date(rec.updatedAtMs).toISOString(),
      result:
        rec.state === 'done'
          ? {
              status: rec.resultStatus ?? null,
              content_type: result?.contentType ?? null,
              body: result?.body === undefined ? null : Buffer.from(result.body).toString('utf8'),
              body_kept: result?.body !== undefined,
            }
          : null,
    };
    return { status: 200, headers: { 'Cache-Control': 'no-store' }, body, error: '' };
  }

  /** The proxy's conditions changed (a breaker, maintenance, a rule): dispatch and drain by them now. */
  conditionsChanged(): void {
    if (!this.#stopping) this.gate.pump();
  }

  /** The scorecard in the Prometheus text format. */
  metrics(): string {
    return this.gate.metrics();
  }

  /** Stops deciding: waiters are answered 503 `policy_queue_closed`, so are new requests. */
  stop(): void {
    this.#stopping = true;
    this.gate.close();
  }

  /** {@link stop}, then waits up to `graceMs` for replays in flight and closes the store. */
  async close(graceMs = 0): Promise<void> {
    if (this.#closed) return;
    this.stop();
    if (this.#replays.size > 0 && graceMs > 0)
      await Promise.race([
        Promise.allSettled([...this.#replays]),
        new Promise((r) => setTimeout(r, graceMs).unref()),
      ]);
    this.#closed = true;
    this.store.close();
  }
}

/** The decision log's `policy` object: the envelope and where each field came from. */
function envelopeLog(
  env: AdmissionEnvelope,
  s: EnvelopeSources,
  cost: RequestCost,
  now: number,
): Record<string, unknown> {
  return {
    disposition: 'pending',
    class: env.className,
    class_source: s.className,
    tenant: env.tenant,
    tenant_source: s.tenant,
    deadline_ms: Math.round(env.deadlineMs - now),
    deadline_source: s.deadline,
    prompt_tokens_est: cost.promptTokens,
    max_tokens: cost.maxTokensSource === 'body' ? cost.maxOutputTokens : null,
    max_tokens_source: cost.maxTokensSource,
    idempotency_key: env.idempotencyKey ?? null,
    ignored: s.ignored,
    ...(s.emergency !== undefined ? { emergency: s.emergency } : {}),
  };
}
