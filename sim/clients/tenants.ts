/**
 * Tenants and the shape of their requests: who sends (a weighted mix, or one arrival process per
 * tenant), how many tokens, and over which protocol. Keyless traffic (no tenant id) is one tenant, as
 * the capacity gate counts it.
 */
import { type ArrivalConfig, type ArrivalProcess, createArrivalProcess, mergeIndexed } from './arrivals.js';
import {
  createDistribution,
  createTokenDistribution,
  type Distribution,
  type DistributionConfig,
} from './distributions.js';
import { ClientConfigError, requireNonNegative, requirePositive, requireShare } from './errors.js';
import { cumulativeSums, pickCumulative, type RandomFn, type RandomStreams } from './rng.js';

/** Label of keyless traffic in reports and RNG stream names. */
export const KEYLESS_LABEL = 'keyless';

/**
 * The admission envelope's inputs a client carries to a policy gate (gate/policy/envelope.ts): what
 * its credential and route say, the deadline header it sends, its idempotency and declared costs.
 */
export interface EnvelopeConfig {
  /** The class its verified credential names; undefined: the route's or the policy's default. */
  className?: string;
  /** The request path. Default `/v1/chat/completions`. */
  route?: string;
  /** The deadline sent in the policy's deadline header, ms after the first send; undefined: none sent. */
  deadlineMs?: number;
  consequence?: 'read' | 'write' | 'none';
  /** `intent`: the attempts of one logical request share one idempotency key. Default `intent`. */
  idempotency?: 'intent' | 'none';
  /** Tool calls declared (the estimator's tool budget). Default 0. */
  toolCalls?: number;
  /** Reserve traffic (health, cancellation, control), as the gateway marks it. Default false. */
  reserve?: boolean;
  /** The gateway's prompt-token estimate as a share of the true count, (0, 1]. Default 1. */
  promptEstimateShare?: number;
}

/** Request-shape settings a tenant may override and the workload gives defaults for. */
export interface RequestShapeConfig {
  /** Prompt tokens per request. */
  promptTokens?: DistributionConfig;
  /** Output tokens per request (the request's max_tokens, all generated). */
  outputTokens?: DistributionConfig;
  /** Share of requests that stream (SSE), 0..1. Default 1. */
  streamShare?: number;
  /** Share of requests sent as HTTP/2 streams (the rest HTTP/1.1), 0..1. Default 0. */
  h2Share?: number;
  /** Share of requests to a prefill/decode-disaggregated service, 0..1. Default 0. */
  pdShare?: number;
  /** Share of requests that are not inference (GET /v1/models), 0..1. Default 0. */
  nonInferenceShare?: number;
  /** The client gives up this long after the first send, ms. Default none. */
  deadlineMs?: number;
  /** Time-to-first-token objective, ms. Default none. */
  ttftSloMs?: number;
  /**
   * Time of each declared tool call (`envelope.toolCalls`), ms, drawn per call (negative draws
   * count as 0). Default none: no tool time.
   */
  toolMs?: DistributionConfig;
  /** Admission-envelope inputs (used only by a policy gate); a tenant's fields override the workload's. */
  envelope?: EnvelopeConfig;
}

/** One tenant of a workload. */
export interface TenantConfig extends RequestShapeConfig {
  /** The tenant id its credential resolves to; omitted for keyless traffic (at most one such tenant). */
  id?: string;
  /** Relative share of the workload's shared arrivals. Default 1. */
  weight?: number;
  /** The tenant's own arrival process, instead of a share of the workload's. */
  arrival?: ArrivalConfig;
}

/** A plain workload config: tenants, their arrivals and request shapes. */
export interface WorkloadConfig extends RequestShapeConfig {
  /** Arrivals shared by the tenants in proportion to their weights (when tenants have no own arrival). */
  arrival?: ArrivalConfig;
  /** Default: one keyless tenant. */
  tenants?: readonly TenantConfig[];
}

/** A tenant with its distributions built and defaults applied. */
export interface TenantModel {
  /** Tenant id; undefined for keyless traffic. */
  id: string | undefined;
  /** `id`, or {@link KEYLESS_LABEL}. */
  label: string;
  weight: number;
  prompt: Distribution;
  output: Distribution;
  streamShare: number;
  h2Share: number;
  pdShare: number;
  nonInferenceShare: number;
  deadlineMs: number | undefined;
  ttftSloMs: number | undefined;
  /** The merged envelope inputs; undefined when neither the tenant nor the workload gives any. */
  envelope: Readonly<EnvelopeConfig> | undefined;
  /**
   * The time of one tool call, ms (>= 0); undefined when the tenant spends no tool time (no
   * `toolMs`, or no declared tool calls).
   */
  tool: Distribution | undefined;
}

const DEFAULT_PROMPT: DistributionConfig = { kind: 'fixed', value: 512 };
const DEFAULT_OUTPUT: DistributionConfig = { kind: 'fixed', value: 128 };

/**
 * Builds the tenant models of a workload (one keyless tenant when none is listed).
 * @throws ClientConfigError on a bad share, weight or distribution, a duplicate id, or a mix of
 * tenants with and without their own arrival process.
 */
export function resolveTenants(workload: WorkloadConfig, field = 'workload'): TenantModel[] {
  const tenants = workload.tenants ?? [{}];
  if (tenants.length === 0) throw new ClientConfigError(`${field}.tenants`, tenants, 'a non-empty list');
  const own = tenants.filter((t) => t.arrival !== undefined).length;
  if (own !== 0 && own !== tenants.length) {
    throw new ClientConfigError(
      `${field}.tenants`,
      `${own} of ${tenants.length} with an arrival`,
      'all or none with an arrival',
    );
  }
  const seen = new Set<string>();
  return tenants.map((t, i) => {
    const label = t.id ?? KEYLESS_LABEL;
    const path = `${field}.tenants[${i}]`;
    if (t.id !== undefined && t.id === '')
      throw new ClientConfigError(`${path}.id`, t.id, 'a non-empty id (omit it for keyless traffic)');
    const key = t.id === undefined ? '\u0000keyless' : t.id;
    if (seen.has(key)) {
      const expected =
        t.id === undefined ? 'set (only one tenant may be keyless)' : 'unique among the tenants';
      throw new ClientConfigError(`${path}.id`, t.id, expected);
    }
    seen.add(key);
    return tenantModel(t.id, label, t, workload, path);
  });
}

/** A tenant model for traffic from tenant `id` that the workload does not list (e.g. from a trace). */
export function defaultTenantModel(
  workload: WorkloadConfig,
  id: string | undefined,
  field = 'workload',
): TenantModel {
  return tenantModel(id, id ?? KEYLESS_LABEL, {}, workload, field);
}

function tenantModel(
  id: string | undefined,
  label: string,
  t: TenantConfig,
  w: WorkloadConfig,
  path: string,
): TenantModel {
  const share = (name: keyof RequestShapeConfig, value: number | undefined, dflt: number): number =>
    requireShare(`${path}.${name}`, value ?? dflt);
  const optionalPositive = (name: string, v: number | undefined): number | undefined =>
    v === undefined ? undefined : requirePositive(`${path}.${name}`, v);
  const envelope = mergeEnvelope(w.envelope, t.envelope, `${path}.envelope`);
  return {
    id,
    label,
    weight: requireNonNegative(`${path}.weight`, t.weight ?? 1),
    prompt: createTokenDistribution(
      t.promptTokens ?? w.promptTokens ?? DEFAULT_PROMPT,
      `${path}.promptTokens`,
    ),
    output: createTokenDistribution(
      t.outputTokens ?? w.outputTokens ?? DEFAULT_OUTPUT,
      `${path}.outputTokens`,
    ),
    streamShare: share('streamShare', t.streamShare ?? w.streamShare, 1),
    h2Share: share('h2Share', t.h2Share ?? w.h2Share, 0),
    pdShare: share('pdShare', t.pdShare ?? w.pdShare, 0),
    nonInferenceShare: share('nonInferenceShare', t.nonInferenceShare ?? w.nonInferenceShare, 0),
    deadlineMs: optionalPositive('deadlineMs', t.deadlineMs ?? w.deadlineMs),
    ttftSloMs: optionalPositive('ttftSloMs', t.ttftSloMs ?? w.ttftSloMs),
    envelope,
    tool: toolDistribution(t.toolMs ?? w.toolMs, envelope?.toolCalls ?? 0, `${path}.toolMs`),
  };
}

/** The sampler of one tool call's time, ms, clamped to >= 0; undefined without calls or a time. */
function toolDistribution(
  config: DistributionConfig | undefined,
  calls: number,
  field: string,
): Distribution | undefined {
  if (config === undefined || !(calls > 0)) return undefined;
  return createDistribution({ ...config, min: Math.max(0, config.min ?? 0) }, { field });
}

/** The workload's envelope inputs overridden field by field by the tenant's, checked. */
function mergeEnvelope(
  w: EnvelopeConfig | undefined,
  t: EnvelopeConfig | undefined,
  path: string,
): Readonly<EnvelopeConfig> | undefined {
  if (w === undefined && t === undefined) return undefined;
  const e: EnvelopeConfig = { ...w, ...t };
  for (const k of Object.keys(e) as (keyof EnvelopeConfig)[]) if (e[k] === undefined) delete e[k];
  if (e.deadlineMs !== undefined) requirePositive(`${path}.deadlineMs`, e.deadlineMs);
  if (e.toolCalls !== undefined) requireNonNegative(`${path}.toolCalls`, e.toolCalls);
  if (e.promptEstimateShare !== undefined && !(e.promptEstimateShare > 0 && e.promptEstimateShare <= 1))
    throw new ClientConfigError(`${path}.promptEstimateShare`, e.promptEstimateShare, 'a share in (0, 1]');
  return Object.freeze(e);
}

/**
 * Picks a tenant index in proportion to the weights: one RNG draw per pick, none when there
 * is one tenant (its stream has no other use, so skipping changes nothing else).
 */
export class TenantMix {
  readonly #cumulative: number[];

  /** @throws ClientConfigError when every weight is 0. */
  constructor(tenants: readonly TenantModel[], field = 'workload.tenants') {
    this.#cumulative = cumulativeSums(tenants.map((t) => t.weight));
    if (!((this.#cumulative[this.#cumulative.length - 1] ?? 0) > 0)) {
      throw new ClientConfigError(`${field}[*].weight`, 0, 'weights with a positive sum');
    }
  }

  /** Index of the chosen tenant. */
  pick(rng: RandomFn): number {
    if (this.#cumulative.length === 1) return 0;
    return pickCumulative(rng, this.#cumulative);
  }
}

/** An arrival, with the tenant when the arrival process belongs to one. */
export interface TenantArrival {
  /** Virtual time, ms. */
  atMs: number;
  /** Index into the workload's tenants; undefined when the tenant is yet to be picked by weight. */
  tenantIndex: number | undefined;
}

/** A workload's open-loop arrivals. */
export interface WorkloadArrivals {
  next(): TenantArrival | undefined;
}

/**
 * The open-loop arrivals of a workload: its shared process (stream `clients.arrival`), or the merge of
 * the tenants' own processes (stream `clients.arrival.<label>` each), ties going to the tenant listed
 * first. Undefined when the workload declares no arrival process.
 */
export function createWorkloadArrivals(
  workload: WorkloadConfig,
  streams: RandomStreams,
  field = 'workload',
): WorkloadArrivals | undefined {
  const tenants = workload.tenants ?? [];
  if (tenants.length > 0 && tenants.every((t) => t.arrival !== undefined)) {
    const sources: ArrivalProcess[] = tenants.map((t, i) =>
      createArrivalProcess(
        t.arrival as ArrivalConfig,
        streams(`clients.arrival.${t.id ?? KEYLESS_LABEL}`),
        `${field}.tenants[${i}].arrival`,
      ),
    );
    const merged = mergeIndexed(sources);
    return {
      next() {
        const n = merged.next();
        return n === undefined ? undefined : { atMs: n.atMs, tenantIndex: n.source };
      },
    };
  }
  if (workload.arrival === undefined) return undefined;
  const process = createArrivalProcess(workload.arrival, streams('clients.arrival'), `${field}.arrival`);
  return {
    next() {
      const atMs = process.next();
      return atMs === undefined ? undefined : { atMs, tenantIndex: undefined };
    },
  };
}
