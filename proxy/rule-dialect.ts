/**
 * The Dialect of a loxilb rule service: gated and credentialed paths by
 * `route-policy.ts`, decisions by the shared Gate under the rule's key,
 * refusals as the spec's table, credentials by the rule's api_key_auth policy, and a
 * smooth round-robin over the rule's endpoints for requests the gate does
 * not place (an ungated rule).
 */
import {
  endpointId,
  type Gate,
  type ParsedRule,
  type Refusal,
  refusalBody,
  refusalHeaders,
  type Ticket,
} from '../gate/index.js';
import {
  type AuthPolicy,
  authenticate,
  type CredentialOptions,
  rulePolicy,
  ruleTenantClaim,
} from './credentials.js';
import type { Exchange } from './exchange.js';
import type { Target } from './forward.js';
import type { Dialect, RefusalResponse } from './handler.js';
import { isGatedPath, needsCredential } from './route-policy.js';

/** Whether an endpoint may take traffic outside the gate (its breaker is closed). */
export type UsableFn = (service: string, endpointId: string) => boolean;

interface WeightedTarget {
  t: Target;
  weight: number;
  cw: number;
}

export class RuleDialect implements Dialect {
  service: string;
  key: string;
  pd: boolean;
  /** `serviceArguments.name`, when the rule has one (what a policy's degrade pool or dependency names). */
  name: string | undefined;
  #targets = new Map<string, Target>();
  #order: WeightedTarget[] = [];
  #policy: AuthPolicy = 'disabled';
  /** The process credentials with this rule's tenant_claim, when it declares one. */
  #creds: CredentialOptions;

  constructor(
    readonly gate: Gate,
    parsed: ParsedRule,
    readonly creds: CredentialOptions,
    readonly usable: UsableFn,
  ) {
    this.service = parsed.service;
    this.key = parsed.key;
    this.pd = false;
    this.name = undefined;
    this.#creds = creds;
    this.update(parsed);
  }

  /** Takes the rule's current endpoints and policy (after every apply). */
  update(parsed: ParsedRule): void {
    this.#targets = new Map();
    this.#order = [];
    for (const e of parsed.endpoints) {
      const t: Target = { id: endpointId(e), host: e.endpointIP, port: e.targetPort };
      this.#targets.set(t.id, t);
      if (e.role === 'normal') this.#order.push({ t, weight: e.weight, cw: 0 });
    }
    // A P/D pool has no normal endpoint: its ungated requests (model listing) go to any of them.
    if (this.#order.length === 0) {
      for (const e of parsed.endpoints)
        this.#order.push({ t: this.#targets.get(endpointId(e))!, weight: e.weight, cw: 0 });
    }
    this.#policy = rulePolicy(parsed.base);
    const claim = ruleTenantClaim(parsed.base);
    this.#creds = claim === undefined ? this.creds : { ...this.creds, tenantClaim: claim };
    this.pd = parsed.aiGateway && parsed.base.pd_disagg_mode === true;
    this.name =
      typeof parsed.base.name === 'string' && parsed.base.name !== '' ? parsed.base.name : undefined;
  }

  /** Endpoints of the rule, and how many of them have their breaker closed. */
  health(): { endpoints: number; usable: number } {
    let usable = 0;
    for (const t of this.#targets.values()) if (this.usable(this.service, t.id)) usable++;
    return { endpoints: this.#targets.size, usable };
  }

  /** Gated unless known not to be inference (`route-policy.ts`), on the normalised path. */
  isInference(path: string): boolean {
    return isGatedPath(path);
  }

  /** Every path but a health probe needs the policy's credential. */
  authenticate(path: string, headers: Exchange['req']['headers']) {
    if (this.#policy === 'disabled' || !needsCredential(path)) {
      return { ok: true as const, tenant: undefined };
    }
    return authenticate(this.#policy, headers, this.#creds);
  }

  admit(req: Parameters<Dialect['admit']>[0], ex: Exchange) {
    return this.gate.admit(this.key, req, ex);
  }

  cancel(ticket: Ticket): void {
    this.gate.cancel(this.key, ticket);
  }

  refusal(r: Refusal): RefusalResponse {
    return { status: r.status, headers: refusalHeaders(r), body: refusalBody(r), error: r.error };
  }

  target(id: string): Target | undefined {
    return this.#targets.get(id);
  }

  pick(): Target | null {
    let total = 0;
    let best: WeightedTarget | null = null;
    for (const e of this.#order) {
      if (e.weight <= 0 || !this.usable(this.service, e.t.id)) continue;
      e.cw += e.weight;
      total += e.weight;
      if (best === null || e.cw > best.cw) best = e;
    }
    if (best === null) return null;
    best.cw -= total;
    return best.t;
  }
}
