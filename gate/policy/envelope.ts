/**
 * The trusted admission envelope: class, tenant, deadline, consequence, cost and idempotency key of
 * one request, derived from the verified credential, the route and the policy. A client header may
 * only lower the class's priority or shorten the deadline; nothing in the prompt sets any of it.
 * Each field's source is returned beside it, for the decision log.
 */
import type { Policy } from './compile.js';
import { type CostEstimate, costProblem } from './estimator.js';

/** What a request is allowed to do to the world, carried for the decision log and later rules. */
export type Consequence = 'read' | 'write' | 'none';

/** The inputs of one decision. */
export interface AdmissionEnvelope {
  /** A class of the policy. */
  readonly className: string;
  readonly tenant: string;
  /** Absolute deadline, ms on the gate's clock. */
  readonly deadlineMs: number;
  readonly consequence: Consequence;
  readonly cost: CostEstimate;
  readonly idempotencyKey?: string;
  /** Reserve traffic (health, cancellation, control: decided by the host, never by the client) or an eligible emergency. */
  readonly lane?: 'reserve' | 'emergency';
  /** For an emergency: what made it eligible (for the audit record). */
  readonly eligibleBy?: string;
}

/** Where each envelope field came from. */
export interface EnvelopeSources {
  readonly className: 'claim' | 'route' | 'default' | 'header';
  readonly tenant: 'claim' | 'anonymous';
  readonly deadline: 'default' | 'header';
  /** Header values that were not taken because they would raise priority or lengthen the deadline. */
  readonly ignored: readonly string[];
  readonly emergency?: 'granted' | 'not_eligible';
}

/** What the host knows about a request before the decision. */
export interface EnvelopeInputs {
  /** Claims of the verified credential (API key record or JWT), if any. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** The normalised request path. */
  readonly path: string;
  /** Request header by lower-case name. */
  readonly header?: (name: string) => string | undefined;
  readonly cost: CostEstimate;
  readonly consequence?: Consequence;
  /** Set by the host for its health, cancellation and control endpoints. */
  readonly reserve?: boolean;
  /** The request asks for the emergency lane; granted only when the credential is eligible. */
  readonly emergency?: boolean;
}

/** A bad envelope input: names the field and what is wrong. */
export interface EnvelopeProblem {
  readonly field: string;
  readonly detail: string;
}

/** The envelope and its sources, or the first problem found. */
export type EnvelopeResult =
  | { readonly ok: true; readonly envelope: AdmissionEnvelope; readonly sources: EnvelopeSources }
  | { readonly ok: false; readonly problem: EnvelopeProblem };

const MAX_KEY = 256;

/** Derives the envelope of a request under `policy` at `nowMs`. */
export function deriveEnvelope(policy: Policy, inputs: EnvelopeInputs, nowMs: number): EnvelopeResult {
  const env = policy.document.envelope;
  const fail = (field: string, detail: string): EnvelopeResult => ({ ok: false, problem: { field, detail } });
  const costBad = costProblem(inputs.cost);
  if (costBad !== undefined) return fail(costBad.slice(0, costBad.indexOf(':')), costBad);
  const ignored: string[] = [];
  let className = env.default_class;
  let classSource: EnvelopeSources['className'] = 'default';
  const claimed = env.class_claim === undefined ? undefined : inputs.claims?.[env.class_claim];
  if (claimed !== undefined) {
    if (typeof claimed !== 'string' || !policy.byName.has(claimed))
      return fail(`claim ${env.class_claim}`, `${JSON.stringify(claimed)} is not a class of the policy`);
    className = claimed;
    classSource = 'claim';
  } else {
    let best = -1;
    for (const r of env.routes) {
      if (r.path_prefix.length > best && underPrefix(inputs.path, r.path_prefix)) {
        best = r.path_prefix.length;
        className = r.class;
        classSource = 'route';
      }
    }
  }
  const hClass = env.client_header.class;
  const askedClass = hClass === undefined ? undefined : inputs.header?.(hClass);
  if (hClass !== undefined && askedClass !== undefined) {
    const asked = policy.byName.get(askedClass);
    if (asked === undefined)
      return fail(`header ${hClass}`, `${JSON.stringify(askedClass)} is not a class of the policy`);
    if (asked.priority <= policy.byName.get(className)!.priority) {
      className = asked.name;
      classSource = 'header';
    } else ignored.push(`${hClass}: ${askedClass} (higher priority)`);
  }
  const cls = policy.byName.get(className)!;
  const tenantClaim = inputs.claims?.[env.tenant_claim];
  const tenant = typeof tenantClaim === 'string' && tenantClaim !== '' ? tenantClaim : 'anonymous';
  let deadlineMs = nowMs + cls.deadline.defaultMs;
  let deadlineSource: EnvelopeSources['deadline'] = 'default';
  const hDeadline = env.client_header.deadline_ms;
  const askedDeadline = hDeadline === undefined ? undefined : inputs.header?.(hDeadline);
  if (hDeadline !== undefined && askedDeadline !== undefined) {
    if (!/^\d{1,9}$/.test(askedDeadline))
      return fail(
        `header ${hDeadline}`,
        `${JSON.stringify(askedDeadline)} is not a whole number of milliseconds`,
      );
    const ms = Number(askedDeadline);
    if (!cls.deadline.clientMayShorten)
      ignored.push(`${hDeadline}: ${ms} (class ${cls.name} keeps its deadline)`);
    else if (ms < cls.deadline.defaultMs) {
      deadlineMs = nowMs + ms;
      deadlineSource = 'header';
    } else ignored.push(`${hDeadline}: ${ms} (longer than ${cls.deadline.defaultMs})`);
  }
  const keyHeader = policy.retry.idempotencyHeader;
  const key = inputs.header?.(keyHeader);
  if (key !== undefined && (key.length === 0 || key.length > MAX_KEY))
    return fail(`header ${keyHeader}`, `a key of ${key.length} characters is not 1 to ${MAX_KEY}`);
  let lane: AdmissionEnvelope['lane'];
  let eligibleBy: string | undefined;
  let emergency: EnvelopeSources['emergency'];
  if (inputs.reserve === true) lane = 'reserve';
  else if (inputs.emergency === true) {
    eligibleBy = emergencyEligibility(policy, inputs.claims, tenant);
    emergency = eligibleBy === undefined ? 'not_eligible' : 'granted';
    if (eligibleBy !== undefined) lane = 'emergency';
  }
  const envelope: AdmissionEnvelope = {
    className,
    tenant,
    deadlineMs,
    consequence: inputs.consequence ?? 'none',
    cost: inputs.cost,
    ...(key !== undefined ? { idempotencyKey: key } : {}),
    ...(lane !== undefined ? { lane } : {}),
    ...(eligibleBy !== undefined ? { eligibleBy } : {}),
  };
  const sources: EnvelopeSources = {
    className: classSource,
    tenant: tenant === 'anonymous' ? 'anonymous' : 'claim',
    deadline: deadlineSource,
    ignored,
    ...(emergency !== undefined ? { emergency } : {}),
  };
  return { ok: true, envelope, sources };
}

function emergencyEligibility(
  policy: Policy,
  claims: Readonly<Record<string, unknown>> | undefined,
  tenant: string,
): string | undefined {
  const em = policy.emergency;
  if (em === undefined) return undefined;
  const v = em.claim === undefined ? undefined : claims?.[em.claim.name];
  if (em.claim !== undefined && (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number'))
    if (String(v) === em.claim.equals) return `claim ${em.claim.name}`;
  if (tenant !== 'anonymous' && em.tenants.has(tenant)) return 'tenant list';
  return undefined;
}

/** `path` is `prefix` or below it, on a segment boundary (`/v1/batch` covers `/v1/batch/1`, not `/v1/batches`). */
function underPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || prefix.endsWith('/') || path.charCodeAt(prefix.length) === 47;
}
