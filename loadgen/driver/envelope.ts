/**
 * The admission envelope on the wire: what a client of a policy scenario sends so that the proxy's
 * `--policy` derives the envelope the simulator derives for it (sim/run/policy-admission.ts
 * `envelopeOf`). The same rules, in HTTP:
 *
 * - the credential: `Authorization: Bearer <HS256 JWT>` with the policy's `tenant_claim` set to
 *   the tenant and, when the policy has a `class_claim` and the client an envelope class, that
 *   claim set to the class; one token per (tenant, class), signed once;
 * - the deadline header (`envelope.client_header.deadline_ms`): the ms left of the envelope's
 *   deadline, counted from the logical request's first send, `max(0, floor(first + deadline − now))`;
 * - the idempotency header (`retry.idempotency_header`): `intent-<logicalId>`, shared by the
 *   retries of one request, unless the envelope says `idempotency: none`;
 * - the route: the request path, when the envelope gives one.
 *
 * Keyless traffic (no tenant) carries no token: the simulator gives it no tenant claim, and a
 * token without one names no tenant. Non-inference requests carry the credential only (the
 * simulator derives no envelope for them).
 */
import type { Policy } from '../../gate/index.js';
import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import type { HttpRequestSpec } from '../shared/payload.js';
import { signHs256 } from './jwt-sign.js';

/** What of a policy the envelope on the wire depends on. */
export interface EnvelopeRules {
  /** The claim naming the tenant (`envelope.tenant_claim`). */
  tenantClaim: string;
  /** The claim naming the class (`envelope.class_claim`), if the policy reads one. */
  classClaim: string | undefined;
  /** The client's deadline header (`envelope.client_header.deadline_ms`), if any. */
  deadlineHeader: string | undefined;
  /** The idempotency header (`retry.idempotency_header`). */
  idempotencyHeader: string;
}

/** The envelope rules of a compiled policy. */
export function envelopeRules(policy: Policy): EnvelopeRules {
  const env = policy.document.envelope;
  return {
    tenantClaim: env.tenant_claim,
    classClaim: env.class_claim,
    deadlineHeader: env.client_header.deadline_ms,
    idempotencyHeader: policy.retry.idempotencyHeader,
  };
}

/** The descriptor fields the envelope is made of. */
export type EnvelopeRequest = Pick<RequestDescriptor, 'tenant' | 'logicalId' | 'firstSentAtMs' | 'envelope'>;

/** The claims of a request's token (no `exp`/`iat`: see {@link TokenCache}), as envelopeOf sets them. */
export function envelopeClaims(
  tenant: string | undefined,
  className: string | undefined,
  rules: EnvelopeRules,
): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (tenant !== undefined) claims[rules.tenantClaim] = tenant;
  if (className !== undefined && rules.classClaim !== undefined) claims[rules.classClaim] = className;
  return claims;
}

/**
 * The envelope headers of an inference attempt sent at `nowMs` (ms on the schedule's clock, the
 * clock of `firstSentAtMs`): the deadline left and the intent key, as envelopeOf derives them.
 */
export function envelopeHeaders(
  d: EnvelopeRequest,
  nowMs: number,
  rules: EnvelopeRules,
): Record<string, string> {
  const e = d.envelope;
  const out: Record<string, string> = {};
  if (rules.deadlineHeader !== undefined && e?.deadlineMs !== undefined)
    out[rules.deadlineHeader] = String(Math.max(0, Math.floor(d.firstSentAtMs + e.deadlineMs - nowMs)));
  if (e?.idempotency !== 'none') out[rules.idempotencyHeader] = `intent-${d.logicalId}`;
  return out;
}

/** HS256 tokens, one per (tenant, class), signed on first use and kept for the run. */
export class TokenCache {
  readonly #rules: EnvelopeRules;
  readonly #secret: Buffer;
  readonly #iatS: number;
  readonly #expS: number;
  readonly #tokens = new Map<string, string>();

  /**
   * @param secret the HS256 secret (the bytes of the proxy's `--jwt-secret-file`)
   * @param nowS wall-clock time the tokens are issued at, s since the epoch (`iat`)
   * @param validForS how long they stay valid, s (`exp` = `iat` + this; the proxy requires `exp`)
   */
  constructor(rules: EnvelopeRules, secret: Buffer, nowS: number, validForS: number) {
    this.#rules = rules;
    this.#secret = secret;
    this.#iatS = Math.floor(nowS);
    this.#expS = this.#iatS + Math.ceil(validForS);
  }

  /** The token of `tenant` in `className` (undefined: no class claim). */
  token(tenant: string, className: string | undefined): string {
    const key = `${tenant}\u0000${className ?? ''}`;
    let t = this.#tokens.get(key);
    if (t === undefined) {
      const claims = { ...envelopeClaims(tenant, className, this.#rules), iat: this.#iatS, exp: this.#expS };
      t = signHs256(claims, this.#secret);
      this.#tokens.set(key, t);
    }
    return t;
  }

  /** Tokens signed so far. */
  get size(): number {
    return this.#tokens.size;
  }
}

/** The envelope a load run sends: the policy's rules and the signer of its tokens. */
export interface LoadEnvelope {
  rules: EnvelopeRules;
  tokens: TokenCache;
  /** The compiled policy, when the records are to carry its class columns (policy-record.ts). */
  policy?: Policy;
}

/**
 * `spec` (the request built for `d`) with the envelope of `d` at `nowMs`: the bearer token of its
 * tenant and class in place of any API key; for inference, the envelope headers and the route.
 */
export function withEnvelope(
  spec: HttpRequestSpec,
  d: EnvelopeRequest & Pick<RequestDescriptor, 'inference'>,
  nowMs: number,
  env: LoadEnvelope,
): HttpRequestSpec {
  const headers: Record<string, string> = { ...spec.headers };
  if (d.tenant !== undefined)
    headers.authorization = `Bearer ${env.tokens.token(d.tenant, d.envelope?.className)}`;
  if (!d.inference) return { ...spec, headers };
  Object.assign(headers, envelopeHeaders(d, nowMs, env.rules));
  return { ...spec, headers, path: d.envelope?.route ?? spec.path };
}
