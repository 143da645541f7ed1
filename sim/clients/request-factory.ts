/**
 * Request descriptors: what a client sends, drawn from the workload's tenants and shapes. Retries of a
 * request are new attempts of the same logical request (same `logicalId`, tokens, tenant and absolute
 * deadline), so retry amplification can be measured as attempts / logical requests.
 */
import { chance, type RandomFn, type RandomStreams } from './rng.js';
import {
  defaultTenantModel,
  type EnvelopeConfig,
  resolveTenants,
  TenantMix,
  type TenantModel,
  type WorkloadConfig,
} from './tenants.js';
import type { RecordedTiming, TraceRecord } from './trace-parse.js';

/** One attempt of a request, as the simulator host sends it. */
export interface RequestDescriptor {
  /** Attempt id, unique in the run, from 1. */
  id: number;
  /** Logical request id, shared by an original attempt and its retries, from 1. */
  logicalId: number;
  /** 1 for the original attempt, 2 for the first retry, ... */
  attempt: number;
  /** Tenant id its credential resolves to; undefined for keyless traffic. */
  tenant: string | undefined;
  /** Prompt tokens (0 for non-inference requests). */
  promptTokens: number;
  /** Output tokens to generate (0 for non-inference requests). */
  outputTokens: number;
  /** Streamed (SSE) response. */
  stream: boolean;
  /** HTTP/1.1 request or HTTP/2 stream (they meet the gate's queue differently). */
  protocol: 'http1' | 'h2';
  /** Sent to a prefill/decode-disaggregated service. */
  pd: boolean;
  /** An inference call; false for GET /v1/models, which bypasses the ceilings. */
  inference: boolean;
  /** Virtual time this attempt is sent, ms. */
  sentAtMs: number;
  /** Virtual time the logical request was first sent, ms. */
  firstSentAtMs: number;
  /** Absolute virtual time after which the client no longer wants the answer, ms; undefined for none. */
  deadlineMs: number | undefined;
  /** Time-to-first-token objective relative to `firstSentAtMs`, ms; undefined for none. */
  ttftSloMs: number | undefined;
  /** Prefix-block ids (Mooncake traces), for prefix-cache modelling. */
  prefixHashIds?: readonly number[];
  /** Engine timing a gateway recorded for this request (decision-log replays). */
  recorded?: RecordedTiming;
  /** The tenant's admission-envelope inputs (shared by its requests; read by a policy gate). */
  envelope?: Readonly<EnvelopeConfig>;
  /**
   * The time of each tool call the request makes after admission and before its generation, ms
   * of virtual time before any tool slowdown, in call order; absent when it spends no tool time.
   * Retries make the same calls.
   */
  toolCallsMs?: readonly number[];
}

/**
 * Makes request descriptors. RNG streams used (one draw each per new logical request, whatever the
 * request's shape, so changing one share does not shift the other samples): `clients.tenant`,
 * `clients.prompt`, `clients.output`, and `clients.shape` (4 draws: non-inference, stream, h2, pd);
 * and `clients.tool`, one draw per declared tool call of a tenant with a tool time (only those).
 */
export class RequestFactory {
  readonly #workload: WorkloadConfig;
  readonly #tenants: TenantModel[];
  readonly #mix: TenantMix;
  readonly #extra = new Map<string, TenantModel>();
  readonly #tenantRng: RandomFn;
  readonly #promptRng: RandomFn;
  readonly #outputRng: RandomFn;
  readonly #shapeRng: RandomFn;
  readonly #streams: RandomStreams;
  /** Made on the first tool call drawn: a workload without tool time never opens it. */
  #toolRng: RandomFn | undefined = undefined;
  #nextId = 1;
  #nextLogicalId = 1;

  /** @throws ClientConfigError when the workload config is invalid. */
  constructor(workload: WorkloadConfig, streams: RandomStreams) {
    this.#workload = workload;
    this.#tenants = resolveTenants(workload);
    this.#mix = new TenantMix(this.#tenants);
    this.#tenantRng = streams('clients.tenant');
    this.#promptRng = streams('clients.prompt');
    this.#outputRng = streams('clients.output');
    this.#shapeRng = streams('clients.shape');
    this.#streams = streams;
  }

  /** The workload's tenants, in config order. */
  get tenants(): readonly TenantModel[] {
    return this.#tenants;
  }

  /** Attempts made so far (originals and retries). */
  get attempts(): number {
    return this.#nextId - 1;
  }

  /** Logical requests made so far. */
  get logicalRequests(): number {
    return this.#nextLogicalId - 1;
  }

  /**
   * A new logical request sent at `atMs` (ms), attempt 1. The tenant is `tenantIndex`, or drawn by weight.
   * Tokens come from the tenant's distributions.
   */
  create(atMs: number, tenantIndex?: number): RequestDescriptor {
    const tenant = this.#tenantAt(tenantIndex);
    const promptTokens = tenant.prompt.sample(this.#promptRng);
    const outputTokens = tenant.output.sample(this.#outputRng);
    return this.#build(atMs, tenant, promptTokens, outputTokens, undefined);
  }

  /**
   * A new logical request from a trace record, sent at `atMs` (default `record.atMs`): tokens (and prefix
   * blocks) from the record; the tenant is the record's (listed or not), else `tenantIndex`, else drawn by
   * weight. The prompt and output streams are not drawn.
   */
  fromTrace(record: TraceRecord, atMs: number = record.atMs, tenantIndex?: number): RequestDescriptor {
    const tenant =
      record.tenant === undefined ? this.#tenantAt(tenantIndex) : this.#tenantById(record.tenant);
    if (record.tenant !== undefined) this.#tenantRng();
    const req = this.#build(atMs, tenant, record.promptTokens, record.outputTokens, record.prefixHashIds);
    // A decision log says what each request was: those facts override the drawn shape.
    if (record.inference === false) {
      req.inference = false;
      req.promptTokens = 0;
      req.outputTokens = 0;
      req.stream = false;
      req.pd = false;
    }
    if (record.protocol !== undefined) req.protocol = record.protocol;
    if (record.recorded !== undefined && req.inference) req.recorded = record.recorded;
    return req;
  }

  /** The next attempt of `previous`'s logical request, sent at `atMs` (ms). Draws nothing. */
  retry(previous: RequestDescriptor, atMs: number): RequestDescriptor {
    const next: RequestDescriptor = {
      ...previous,
      id: this.#nextId,
      attempt: previous.attempt + 1,
      sentAtMs: atMs,
    };
    this.#nextId += 1;
    return next;
  }

  /** One drawn time per declared tool call of `tenant` (which has a tool time), ms. */
  #toolCalls(tenant: TenantModel): number[] {
    if (this.#toolRng === undefined) this.#toolRng = this.#streams('clients.tool');
    const rng = this.#toolRng;
    const tool = tenant.tool as NonNullable<TenantModel['tool']>;
    const n = tenant.envelope?.toolCalls ?? 0;
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(tool.sample(rng));
    return out;
  }

  #tenantAt(tenantIndex: number | undefined): TenantModel {
    const drawn = this.#mix.pick(this.#tenantRng);
    const index = tenantIndex ?? drawn;
    const tenant = this.#tenants[index];
    if (tenant === undefined) throw new RangeError(`RequestFactory: no tenant at index ${index}`);
    return tenant;
  }

  #tenantById(id: string): TenantModel {
    const listed = this.#tenants.find((t) => t.id === id);
    if (listed !== undefined) return listed;
    let model = this.#extra.get(id);
    if (model === undefined) {
      model = defaultTenantModel(this.#workload, id);
      this.#extra.set(id, model);
    }
    return model;
  }

  #build(
    atMs: number,
    tenant: TenantModel,
    promptTokens: number,
    outputTokens: number,
    prefixHashIds: readonly number[] | undefined,
  ): RequestDescriptor {
    const nonInference = chance(this.#shapeRng, tenant.nonInferenceShare);
    const stream = chance(this.#shapeRng, tenant.streamShare);
    const h2 = chance(this.#shapeRng, tenant.h2Share);
    const pd = chance(this.#shapeRng, tenant.pdShare);
    const inference = !nonInference;
    const req: RequestDescriptor = {
      id: this.#nextId,
      logicalId: this.#nextLogicalId,
      attempt: 1,
      tenant: tenant.id,
      promptTokens: inference ? promptTokens : 0,
      outputTokens: inference ? outputTokens : 0,
      stream: inference && stream,
      protocol: h2 ? 'h2' : 'http1',
      pd: inference && pd,
      inference,
      sentAtMs: atMs,
      firstSentAtMs: atMs,
      deadlineMs: tenant.deadlineMs === undefined ? undefined : atMs + tenant.deadlineMs,
      ttftSloMs: tenant.ttftSloMs,
    };
    if (prefixHashIds !== undefined && inference) req.prefixHashIds = prefixHashIds;
    if (tenant.envelope !== undefined) req.envelope = tenant.envelope;
    if (tenant.tool !== undefined && inference) req.toolCallsMs = this.#toolCalls(tenant);
    this.#nextId += 1;
    this.#nextLogicalId += 1;
    return req;
  }
}
