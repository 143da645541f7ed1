/**
 * The scenario file format as a zod schema: strict (an unknown key is an error), snake_case, every
 * quantity with its unit in its name (`_s`, `_ms`, `_per_sec`, `_share` 0..1). The JSON Schema in
 * `scenarios/scenario.schema.json` and the reference in `scenarios/README.md` are generated from it.
 *
 * The gate rule is checked by the gate's own code (`gate/rule.ts`, `gate/config.ts`) in refinements,
 * so its errors read exactly as the management API's would, under the scenario path.
 */
import { z } from 'zod';
import { SIMULATED_PROFILES } from '../engine/catalogue.js';
import { VLLM_METRICS_VERSIONS, type VllmMetricsVersion } from '../engine/exposition.js';
import {
  checkEndpointList,
  checkEnv,
  checkServiceArguments,
  checkWholeRule,
  ENDPOINT_JSON,
  ENDPOINT_KEYS,
  serviceArgumentsJson,
} from './gate-section.js';
import { encode, type IssueText, report, scenarioErrorMap, show } from './issues.js';

// ---------------------------------------------------------------------------------------------
// Building blocks

/**
 * Upper bounds of a scenario's numbers: far above any real deployment, and low enough that
 * `validate` refuses what `run` could not do (1e308 requests per second would otherwise pass
 * validation and exhaust memory in the run). Documented in scenarios/README.md.
 */
export const SCENARIO_LIMITS = {
  /** Requests per second of one arrival process. */
  ratePerSec: 1_000_000,
  /** Any time in ms: 7 days. */
  ms: 7 * 86_400_000,
  /** Any time in s: 7 days. */
  s: 7 * 86_400,
  /** Any other number: weights, speedups, distribution values (token counts, think times). */
  value: 1_000_000_000,
  /** Counts: arrivals, retries, requests per user, cycles, thresholds. */
  count: 1_000_000_000,
  /** Closed-loop users. */
  users: 100_000,
  /** Requests of a spike sent all at once. */
  spikeCount: 1_000_000,
  /** Engines over all groups. */
  engines: 4096,
  /** Peak arrival rate (all open-loop processes added) times duration_s: the requests a run may be offered. */
  offeredRequests: 20_000_000,
} as const;

const L = SCENARIO_LIMITS;
const nonNegative = (max: number = L.value) => z.number().min(0).max(max);
const positive = (max: number = L.value) => z.number().positive().max(max);
/** Any finite number within ±SCENARIO_LIMITS.value (distribution values, clamps, coefficients). */
const bounded = () => z.number().min(-L.value).max(L.value);
const share = () => z.number().min(0).max(1);
const count = (max: number = L.count) => z.int().min(0).max(max);

/** JSON Schema replacements for schemas whose checks are code (the gate's rule parser). */
export const JSON_OVERRIDES = new Map<z.core.$ZodType, () => Record<string, unknown>>();

// ---------------------------------------------------------------------------------------------
// Token and think-time distributions (sim/clients/distributions.ts)

const clamp = {
  min: bounded()
    .optional()
    .describe('Lower clamp applied after sampling (inclusive). Token counts are at least 1.'),
  max: bounded().optional().describe('Upper clamp applied after sampling (inclusive).'),
};

const fixedDist = z
  .strictObject({ kind: z.literal('fixed'), value: bounded().describe('The value.'), ...clamp })
  .describe('Always the same value.');
const uniformDist = z
  .strictObject({
    kind: z.literal('uniform'),
    low: bounded().describe('Lowest value (inclusive).'),
    high: bounded().describe('Highest value (inclusive for token counts).'),
    ...clamp,
  })
  .describe('Uniform between low and high.')
  .superRefine((d, ctx) => {
    if (d.high < d.low)
      report(ctx, ['high'], d.high, `${d.high} is below low (${d.low})`, `a number >= low (${d.low})`);
  });
const exponentialDist = z
  .strictObject({ kind: z.literal('exponential'), mean: positive().describe('Mean.'), ...clamp })
  .describe('Exponential with the given mean (e.g. think times).');
const lognormalDist = z
  .strictObject({
    kind: z.literal('lognormal'),
    median: positive().optional().describe('Median (with p95).'),
    p95: positive().optional().describe('95th percentile, >= median (with median).'),
    mu: z
      .number()
      .min(-50)
      .max(50)
      .optional()
      .describe('Mean of the underlying normal (with sigma), -50..50.'),
    sigma: nonNegative(20)
      .optional()
      .describe('Standard deviation of the underlying normal (with mu), 0..20.'),
    ...clamp,
  })
  .describe('Lognormal, by median and p95, or by mu and sigma.')
  .superRefine((d, ctx) => {
    const byQ = d.median !== undefined || d.p95 !== undefined;
    const byP = d.mu !== undefined || d.sigma !== undefined;
    const expected = 'median and p95, or mu and sigma';
    if (byQ === byP) {
      report(
        ctx,
        [],
        d,
        byQ ? 'gives both median/p95 and mu/sigma' : 'gives neither median/p95 nor mu/sigma',
        expected,
      );
      return;
    }
    if (byQ) {
      for (const k of ['median', 'p95'] as const) {
        if (d[k] === undefined) report(ctx, [k], undefined, `missing; expected ${expected}`, expected);
      }
      if (d.median !== undefined && d.p95 !== undefined && d.p95 < d.median) {
        report(
          ctx,
          ['p95'],
          d.p95,
          `${d.p95} is below the median ${d.median}`,
          `a number >= median (${d.median})`,
        );
      }
    } else {
      for (const k of ['mu', 'sigma'] as const) {
        if (d[k] === undefined) report(ctx, [k], undefined, `missing; expected ${expected}`, expected);
      }
    }
  });
const empiricalDist = z
  .strictObject({
    kind: z.literal('empirical'),
    values: z.array(bounded()).min(1).describe('The values to draw from.'),
    weights: z
      .array(nonNegative())
      .optional()
      .describe('Relative weight of each value (same length); default uniform.'),
    ...clamp,
  })
  .describe('A value drawn from a list, uniformly or by weight.')
  .superRefine((d, ctx) => {
    if (d.weights !== undefined && d.weights.length !== d.values.length) {
      report(
        ctx,
        ['weights'],
        d.weights.length,
        `has ${d.weights.length} weights for ${d.values.length} values`,
        `a list as long as values (${d.values.length})`,
      );
    }
  });

/** A distribution of token counts or times. */
export const distributionSchema = z
  .discriminatedUnion('kind', [fixedDist, uniformDist, exponentialDist, lognormalDist, empiricalDist])
  .meta({
    id: 'Distribution',
    description:
      'A distribution, by kind: fixed, uniform, exponential, lognormal or empirical. Token counts are rounded to whole tokens and are at least 1.',
  });

// ---------------------------------------------------------------------------------------------
// Arrival processes (sim/clients/arrivals.ts)

const arrivalCommon = {
  start_ms: nonNegative(L.ms).optional().describe('Virtual time the process starts, ms. Default 0.'),
  max_arrivals: count().optional().describe('Stop after this many arrivals. Default unlimited.'),
};
const durationMs = nonNegative(L.ms)
  .optional()
  .describe('Length of the process, ms. Default: to the end of the run.');

const constantArrival = z
  .strictObject({
    kind: z.literal('constant'),
    rate_per_sec: positive(L.ratePerSec).describe('Requests per second, evenly spaced.'),
    duration_ms: durationMs,
    ...arrivalCommon,
  })
  .describe('Evenly spaced arrivals.');
const poissonArrival = z
  .strictObject({
    kind: z.literal('poisson'),
    rate_per_sec: positive(L.ratePerSec).describe('Mean requests per second.'),
    duration_ms: durationMs,
    ...arrivalCommon,
  })
  .describe('A Poisson process.');
const rampArrival = z
  .strictObject({
    kind: z.literal('ramp'),
    from_rate_per_sec: nonNegative(L.ratePerSec).describe('Rate at the start, requests per second.'),
    to_rate_per_sec: nonNegative(L.ratePerSec).describe('Rate at the end, requests per second.'),
    duration_ms: durationMs,
    ...arrivalCommon,
  })
  .describe('A Poisson process whose rate moves linearly over duration_ms.');
const stepArrival = z
  .strictObject({
    kind: z.literal('step'),
    steps: z
      .array(
        z.strictObject({
          duration_ms: nonNegative(L.ms).describe('Length of the step, ms.'),
          rate_per_sec: nonNegative(L.ratePerSec).describe('Mean requests per second during the step.'),
        }),
      )
      .min(1)
      .describe('The steps, one after another.'),
    ...arrivalCommon,
  })
  .describe('A Poisson process with a piecewise-constant rate.');
const spikeArrival = z
  .strictObject({
    kind: z.literal('spike'),
    base_rate_per_sec: nonNegative(L.ratePerSec).describe('Base Poisson rate, requests per second.'),
    duration_ms: durationMs,
    spike_at_ms: nonNegative(L.ms).describe('Start of the spike, ms after start_ms.'),
    spike_rate_per_sec: nonNegative(L.ratePerSec)
      .optional()
      .describe('Extra rate during the spike (with spike_duration_ms).'),
    spike_duration_ms: nonNegative(L.ms)
      .optional()
      .describe('Length of the spike, ms (with spike_rate_per_sec).'),
    spike_count: count(L.spikeCount)
      .optional()
      .describe('Requests sent all at once at spike_at_ms (instead of a rate).'),
    ...arrivalCommon,
  })
  .describe('Poisson base traffic plus a spike: an extra rate for a while, or a burst of requests at once.')
  .superRefine((a, ctx) => {
    if (a.spike_count !== undefined) {
      if (a.spike_rate_per_sec !== undefined || a.spike_duration_ms !== undefined) {
        const key = a.spike_rate_per_sec !== undefined ? 'spike_rate_per_sec' : 'spike_duration_ms';
        report(
          ctx,
          [key],
          a[key],
          'is given with spike_count',
          'either spike_count, or spike_rate_per_sec with spike_duration_ms',
        );
      }
    } else {
      for (const key of ['spike_rate_per_sec', 'spike_duration_ms'] as const) {
        if (a[key] === undefined) {
          report(
            ctx,
            [key],
            undefined,
            'missing; expected a number >= 0 (or give spike_count)',
            'either spike_count, or spike_rate_per_sec with spike_duration_ms',
          );
        }
      }
    }
  });
const diurnalArrival = z
  .strictObject({
    kind: z.literal('diurnal'),
    mean_rate_per_sec: positive(L.ratePerSec).describe('Mean rate, requests per second.'),
    amplitude_per_sec: nonNegative(L.ratePerSec).describe(
      'Swing around the mean, requests per second; at most the mean.',
    ),
    period_ms: positive(L.ms).describe('Period of the sine, ms.'),
    phase_ms: z
      .number()
      .min(-L.ms)
      .max(L.ms)
      .optional()
      .describe('Shift of the sine, ms. Default 0 (starts at the mean, rising).'),
    duration_ms: durationMs,
    ...arrivalCommon,
  })
  .describe('A Poisson process whose rate follows a sine around a mean.')
  .superRefine((a, ctx) => {
    if (a.amplitude_per_sec > a.mean_rate_per_sec) {
      report(
        ctx,
        ['amplitude_per_sec'],
        a.amplitude_per_sec,
        `${a.amplitude_per_sec} is above mean_rate_per_sec (${a.mean_rate_per_sec})`,
        `a number at most mean_rate_per_sec (${a.mean_rate_per_sec})`,
      );
    }
  });
const traceArrival = z
  .strictObject({
    kind: z.literal('trace'),
    at_ms: z
      .array(nonNegative(L.ms))
      .min(1)
      .describe('Recorded arrival times, ms from the trace start, non-decreasing.'),
    speedup: positive().optional().describe('Time compression: 2 replays twice as fast. Default 1.'),
    ...arrivalCommon,
  })
  .describe('Replay of arrival times listed inline (for a trace file, use clients.trace).')
  .superRefine((a, ctx) => {
    for (let i = 1; i < a.at_ms.length; i++) {
      const t = a.at_ms[i]!;
      const prev = a.at_ms[i - 1]!;
      if (t < prev) {
        report(ctx, ['at_ms', i], t, `${t} is before the previous time ${prev}`, `a time >= ${prev}`);
        return;
      }
    }
  });

/** An open-loop arrival process. */
export const arrivalSchema = z
  .discriminatedUnion('kind', [
    constantArrival,
    poissonArrival,
    rampArrival,
    stepArrival,
    spikeArrival,
    diurnalArrival,
    traceArrival,
  ])
  .meta({
    id: 'Arrival',
    description:
      'An open-loop arrival process, by kind: constant, poisson, ramp, step, spike, diurnal or trace. Times in ms of virtual time from the start of the run.',
  });

// ---------------------------------------------------------------------------------------------
// Clients

/** The admission envelope's inputs a client carries (read only when the gate has a policy). */
export const envelopeSchema = z
  .strictObject({
    class: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe(
        "The workload class its verified credential names (the policy's envelope.class_claim). Default: the policy's route or default class.",
      ),
    route: z
      .string()
      .regex(/^\/[\x21-\x7e]*$/, {
        error: (iss) =>
          encode({ detail: `${show(iss.input)} is not a path`, expected: 'a path starting with /' }),
      })
      .max(1024)
      .optional()
      .describe("The request path the policy's envelope.routes match. Default /v1/chat/completions."),
    deadline_ms: positive(L.ms)
      .optional()
      .describe(
        "The deadline the client sends in the policy's deadline header, ms from its first send (it may only shorten the class's default). Default: none sent.",
      ),
    consequence: z
      .enum(['read', 'write', 'none'])
      .optional()
      .describe('What the request may do to the world (carried in the envelope). Default none.'),
    idempotency: z
      .enum(['intent', 'none'])
      .optional()
      .describe(
        'intent: every attempt of one logical request (its automatic retries) sends the same Idempotency-Key; none: no key. Default intent.',
      ),
    tool_calls: count(1000)
      .optional()
      .describe(
        "Tool calls the request declares (the policy's tool budget; with the client's tool_ms, the tool time it spends holding its permit or seats). Default 0.",
      ),
    reserve: z
      .boolean()
      .optional()
      .describe(
        'Health, cancellation or control traffic the gateway itself marks for the reserve. Default false.',
      ),
    prompt_estimate_share: positive(1)
      .optional()
      .describe(
        "The gateway's estimate of the prompt tokens as a share of the true count, 0..1 (an estimate from bytes undercounts e.g. CJK text: cost underestimation). Default 1.",
      ),
  })
  .meta({
    id: 'Envelope',
    description:
      "The admission envelope's inputs of a client: class (or route), deadline, consequence, idempotency and declared costs. Only with gate.policy, except class and deadline_ms (labels of outcomes) and the tool_calls of a client with a tool_ms.",
  });

const requestShape = {
  prompt_tokens: distributionSchema.optional().describe('Prompt tokens per request. Default fixed 512.'),
  output_tokens: distributionSchema
    .optional()
    .describe('Output tokens per request (all generated). Default fixed 128.'),
  stream_share: share().optional().describe('Share of requests that stream (SSE), 0..1. Default 1.'),
  h2_share: share()
    .optional()
    .describe('Share of requests sent as HTTP/2 streams (these never wait in the queue), 0..1. Default 0.'),
  pd_share: share()
    .optional()
    .describe(
      'Share of requests to the P/D-disaggregated service, 0..1. Default 0. Needs prefill and decode engines.',
    ),
  non_inference_share: share()
    .optional()
    .describe('Share of non-inference requests (GET /v1/models; bypass the ceilings), 0..1. Default 0.'),
  deadline_ms: positive(L.ms)
    .optional()
    .describe('The client gives up (disconnects) this long after its first send, ms. Default none.'),
  ttft_slo_ms: positive(L.ms)
    .optional()
    .describe('Time-to-first-token objective for "good" requests, ms. Default none.'),
  tool_ms: distributionSchema
    .optional()
    .describe(
      'Time of each declared tool call (envelope.tool_calls), ms, drawn per call: spent after admission, before generation, holding the permit or seats. Default none.',
    ),
  envelope: envelopeSchema
    .optional()
    .describe(
      "The policy's admission envelope inputs; a tenant's fields override the workload's one by one. Only with gate.policy.",
    ),
};

/** One tenant of the workload. */
export const tenantSchema = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The tenant id its credential resolves to; omit for keyless traffic (at most one keyless tenant).',
      ),
    api_key: z
      .string()
      .min(1)
      .optional()
      .describe('The API key the tenant sends (load generators send it; the simulator uses id).'),
    weight: nonNegative().optional().describe("Relative share of the workload's shared arrivals. Default 1."),
    arrival: arrivalSchema
      .optional()
      .describe(
        "The tenant's own arrival process instead of a share of clients.arrival (all tenants or none).",
      ),
    ...requestShape,
  })
  .superRefine((t, ctx) => {
    if (t.api_key !== undefined && t.id === undefined) {
      report(
        ctx,
        ['api_key'],
        t.api_key,
        'is given for a keyless tenant',
        'an id with the api_key (the tenant its key resolves to)',
      );
    }
  })
  .meta({
    id: 'Tenant',
    description:
      'A tenant: who sends, how much, and the shape of its requests (overrides the workload defaults).',
  });

/** A client retry policy. */
export const retrySchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('none') }).describe('Never retry.'),
    z
      .strictObject({
        kind: z.literal('honour'),
        max_retries: count().optional().describe('Retries after the first attempt. Default 5.'),
        fallback_delay_ms: nonNegative(L.ms)
          .optional()
          .describe('Delay when a refusal has no Retry-After, ms. Default 1000.'),
      })
      .describe("Wait Retry-After plus a uniform jitter up to the body's jitter_hint_ms, as the gate asks."),
    z
      .strictObject({
        kind: z.literal('sdk'),
        max_retries: count().optional().describe("Default 2, the OpenAI/Anthropic SDKs' max_retries."),
        initial_delay_ms: nonNegative(L.ms).optional().describe('Default 500.'),
        max_delay_ms: nonNegative(L.ms).optional().describe('Default 8000.'),
        max_retry_after_sec: nonNegative(L.s)
          .optional()
          .describe('Largest Retry-After slept as given, s. Default 60.'),
      })
      .describe(
        'The OpenAI/Anthropic SDKs: Retry-After <= 60 s as given, else capped exponential backoff with jitter.',
      ),
    z
      .strictObject({
        kind: z.literal('naive'),
        max_retries: count().optional().describe('Default 3.'),
      })
      .describe('Retry at once, ignoring Retry-After.'),
    z
      .strictObject({
        kind: z.literal('synchronised'),
        delay_ms: nonNegative(L.ms).optional().describe('Delay before every retry, ms. Default 1000.'),
        max_retries: count().optional().describe('Default 3.'),
        honour_retry_after: z
          .boolean()
          .optional()
          .describe('Use Retry-After exactly when present. Default false.'),
      })
      .describe('Everyone retries after the same delay, without jitter: the thundering herd.'),
  ])
  .meta({
    id: 'Retry',
    description:
      'A retry policy, by kind: none, honour, sdk, naive or synchronised. Retries keep the logical request id.',
  });

/** Closed-loop users. */
export const closedLoopSchema = z
  .strictObject({
    users: z.int().min(1).max(L.users).describe('Number of users.'),
    think_time_ms: distributionSchema.describe(
      'Think time between the end of a request and the next send, ms.',
    ),
    start_ms: nonNegative(L.ms).optional().describe('Virtual time of the first send, ms. Default 0.'),
    ramp_up_ms: nonNegative(L.ms)
      .optional()
      .describe('First sends spread evenly over this long, ms. Default 0.'),
    stop_at_ms: nonNegative(L.ms)
      .optional()
      .describe('No send at or after this time, ms. Default: the end of the run.'),
    requests_per_user: count().optional().describe('Requests per user, then it stops. Default unlimited.'),
  })
  .meta({
    id: 'ClosedLoop',
    description:
      'Closed-loop users: each sends, waits for the end, thinks, sends again. Tenants are drawn by weight.',
  });

export const TRACE_FORMATS = ['azure', 'mooncake', 'jsonl'] as const;

/** Replay of a trace file. */
export const traceSchema = z
  .strictObject({
    file: z.string().min(1).describe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the literal ${VAR} syntax
      'The trace file. ${VAR} is replaced from the environment (e.g. ${SLUICE_DATA}/x.csv). A relative path is looked up relative to the scenario file, then the working directory, then data/<basename> of the repository (the traces Sluice ships).',
    ),
    format: z
      .enum(TRACE_FORMATS)
      .optional()
      .describe(
        "azure (CSV), mooncake (JSONL) or jsonl (the proxy's decision log, replayed in arrival order with its recorded timings). Default: by extension, .csv azure or .jsonl mooncake.",
      ),
    speedup: positive().default(1).describe('Time compression: 2 replays the trace twice as fast.'),
    start_ms: nonNegative(L.ms).default(0).describe('Virtual time of the first record, ms.'),
    limit: z
      .int()
      .min(1)
      .max(L.count)
      .optional()
      .describe('Replay at most this many records. Default all (the run ends at duration_s anyway).'),
    spread_quantised_ms: positive(L.ms)
      .optional()
      .describe(
        'Spread records sharing a quantised timestamp over the following bucket of this many ms (the Mooncake conversation trace: about 3000).',
      ),
  })
  .meta({
    id: 'Trace',
    description: 'Replay of a recorded trace: arrival times and token counts from the file.',
  });

export const clientsSchema = z
  .strictObject({
    arrival: arrivalSchema
      .optional()
      .describe(
        'Arrivals shared by the tenants in proportion to their weights (unless every tenant has its own).',
      ),
    tenants: z.array(tenantSchema).min(1).optional().describe('The tenants. Default: one keyless tenant.'),
    ...requestShape,
    retry: retrySchema.default({ kind: 'none' }).describe('What a client does after a refusal or failure.'),
    closed_loop: closedLoopSchema.optional(),
    trace: traceSchema.optional(),
  })
  .describe('Who sends what, and when: open-loop arrivals, closed-loop users and trace replay add up.');

// ---------------------------------------------------------------------------------------------
// Engines (sim/engine/)

/** Engine profiles a scenario can name: the analytic modes, then the built-in deployments (sim/engine/catalogue.ts). */
export const ENGINE_PROFILES: readonly [string, ...string[]] = SIMULATED_PROFILES;
export const ENGINE_ROLES = ['normal', 'prefill', 'decode'] as const;
/** vLLM metric name sets (the version profile of the engine's /metrics). */
export const METRICS_VERSIONS = VLLM_METRICS_VERSIONS as unknown as readonly [
  VllmMetricsVersion,
  ...VllmMetricsVersion[],
];

/** A group of identical engines. */
export const engineGroupSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
      .optional()
      .describe(
        'Name of the group in reports and timeline selectors. Default: the profile (suffixed -2, -3 when repeated).',
      ),
    profile: z
      .enum(ENGINE_PROFILES)
      .optional()
      .describe(
        "Deployment profile, or exponential (analytic checks), fitted (coefficients below) or recorded (each request runs for the time a gateway recorded for it; for decision-log replays). Required unless profile_file is given (then it defaults to the file's base).",
      ),
    profile_file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A profile fitted by `sluice calibrate --out` (YAML or JSON): its terms replace those of its base deployment profile; `profile`, when also given, must be that base. Relative to the scenario file.',
      ),
    count: z.int().min(1).max(L.engines).default(1).describe('Number of engines (one endpoint each).'),
    role: z.enum(ENGINE_ROLES).default('normal').describe('normal, or prefill / decode for a P/D pool.'),
    weight: z.int().min(0).max(65535).default(1).describe("Weight of each engine's endpoint in the rule."),
    max_num_seqs: z
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe("vLLM --max-num-seqs. Default: the profile's."),
    max_num_batched_tokens: z
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .describe("vLLM --max-num-batched-tokens (token budget of a step). Default: the profile's."),
    num_gpu_blocks: z
      .int()
      .min(1)
      .max(10_000_000)
      .optional()
      .describe(
        "KV-cache blocks (vLLM --num-gpu-blocks-override). Default: from the profile's memory budget.",
      ),
    gpu_memory_utilization: z
      .number()
      .positive()
      .max(1)
      .optional()
      .describe(
        'vLLM --gpu-memory-utilization: KV blocks from this share of GPU memory (instead of num_gpu_blocks).',
      ),
    block_size: z.int().min(1).max(256).optional().describe('Tokens per KV block. Default 16.'),
    max_model_len: z
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .describe("Longest prompt + output accepted, tokens. Default: the profile's."),
    long_prefill_token_threshold: count()
      .optional()
      .describe("Cap on one request's prefill chunk, tokens; 0 off. Default 0."),
    api_overhead_ms: nonNegative(L.ms)
      .optional()
      .describe(
        "Frontend delay before a request reaches the engine, ms. Default: the profile's (4 ms); 0 for exponential, fitted and recorded engines.",
      ),
    frontend_per_token_ms: nonNegative()
      .max(2)
      .optional()
      .describe(
        "Frontend work per streamed output token, ms: under load a request's frontend delay is api_overhead_ms / (1 - ρ), ρ = this × the tokens its engine streams per ms (held at 0.9 at most). Default: the profile's (0.55 ms; a calibrated profile's fitted value); no effect on exponential, fixed and recorded engines.",
      ),
    step_jitter_sigma: nonNegative()
      .max(1)
      .optional()
      .describe(
        "σ of the seeded lognormal jitter of every engine step's time; 0 off. Default: the profile's (0.03); 0 for fitted engines.",
      ),
    api_jitter_sigma: nonNegative()
      .max(1)
      .optional()
      .describe(
        "σ of the seeded lognormal jitter of each request's frontend delay; 0 off. Default: the profile's (0.1); 0 for exponential, fitted and recorded engines.",
      ),
    cold_start: z
      .strictObject({
        factor: z
          .number()
          .min(1)
          .max(1_000_000)
          .describe('Step-time multiplier at the moment of a (re)start, >= 1.'),
        window_s: positive(L.s).describe('How long the slowdown lasts (falling linearly to 1), s.'),
      })
      .optional()
      .describe('Slower steps for a while after an engine returns to service.'),
    mean_service_ms: positive(L.ms)
      .optional()
      .describe(
        'exponential only (required): mean service time of a request, ms. Each of max_num_seqs slots serves one request at a time.',
      ),
    fitted: z
      .strictObject({
        a: bounded().describe('Fixed ms per step.'),
        b: bounded().describe('ms per new token.'),
        c: bounded().describe('ms per scheduled sequence.'),
        d: bounded().describe('ms per KV token read.'),
      })
      .optional()
      .describe('fitted only (required): step_ms = a + b·tokens + c·seqs + d·kv_tokens.'),
    metrics_version: z
      .enum(METRICS_VERSIONS)
      .default('latest')
      .describe("Which vLLM release's metric names the engine exposes (v0.9.1, v0.10, v0.11 or latest)."),
  })
  .superRefine((g, ctx) => {
    const own = { exponential: 'mean_service_ms', fitted: 'fitted' } as const;
    for (const [profile, key] of Object.entries(own) as [
      keyof typeof own,
      (typeof own)[keyof typeof own],
    ][]) {
      if (g.profile === profile && g[key] === undefined) {
        report(
          ctx,
          [key],
          undefined,
          `missing; profile ${profile} needs it`,
          `${key} with profile ${profile}`,
        );
      }
      if (g.profile !== profile && g[key] !== undefined) {
        report(
          ctx,
          [key],
          g[key],
          `is only for profile ${profile} (this group is ${g.profile})`,
          `no ${key} with profile ${g.profile}`,
        );
      }
    }
    if (g.num_gpu_blocks !== undefined && g.gpu_memory_utilization !== undefined) {
      report(
        ctx,
        ['gpu_memory_utilization'],
        g.gpu_memory_utilization,
        'is given with num_gpu_blocks',
        'either num_gpu_blocks or gpu_memory_utilization',
      );
    }
  })
  .meta({
    id: 'EngineGroup',
    description: 'A group of identical simulated vLLM engines, each behind one endpoint of the pool.',
  });

// ---------------------------------------------------------------------------------------------
// Gate

const serviceArgumentsRecord = z.record(z.string(), z.unknown());
JSON_OVERRIDES.set(serviceArgumentsRecord, () => serviceArgumentsJson(true));
const replaceArguments = z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
  checkServiceArguments(args, ctx, [], false);
});
JSON_OVERRIDES.set(replaceArguments, () => serviceArgumentsJson(false));
const replaceEndpoints = z.array(z.record(z.string(), z.unknown())).superRefine((eps, ctx) => {
  checkEndpointList(eps, ctx, []);
});
JSON_OVERRIDES.set(replaceEndpoints, () => ({
  type: 'array',
  items: ENDPOINT_JSON,
  description:
    "New explicit endpoints, each one of the pool's (a change re-creates the entry). Default: the stored ones.",
}));
const ruleEndpoints = z.union(
  [z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())],
  {
    error: () =>
      encode({
        detail: 'is not a list of endpoints or engine groups',
        expected: 'a list of endpoints, an engine group, or a list of engine groups',
      }),
  },
);
JSON_OVERRIDES.set(ruleEndpoints, () => ({
  description:
    'Explicit endpoints (paired in order with the engines), or engine groups ({count, profile, role, ...}: the engines, with generated endpoints). Omit to generate one endpoint per engine of `engines`.',
  anyOf: [
    { type: 'array', items: { anyOf: [ENDPOINT_JSON, { $ref: '#/definitions/EngineGroup' }] } },
    { $ref: '#/definitions/EngineGroup' },
  ],
}));

/** True when an endpoints item is an engine group rather than an explicit endpoint. */
export function isEngineGroupItem(item: unknown): boolean {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const keys = Object.keys(item);
  return (
    !keys.some((k) => (ENDPOINT_KEYS as readonly string[]).includes(k) && k !== 'role' && k !== 'weight') &&
    (keys.includes('profile') || keys.includes('profile_file') || keys.includes('count'))
  );
}

/** Forwards the issues of a nested parse (engine groups given in rule.endpoints) to `ctx`. */
function forwardIssues(
  issues: readonly z.core.$ZodIssue[],
  ctx: z.RefinementCtx,
  prefix: readonly (string | number)[],
): void {
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) {
        ctx.addIssue({
          code: 'custom',
          path: [...prefix, ...(iss.path as (string | number)[]), key],
          input: key,
          message: iss.message,
        });
      }
      continue;
    }
    ctx.addIssue({
      code: 'custom',
      path: [...prefix, ...(iss.path as (string | number)[])],
      input: iss.input,
      message: iss.message,
    });
  }
}

export const ruleSchema = z
  .strictObject({
    serviceArguments: serviceArgumentsRecord,
    endpoints: ruleEndpoints.optional(),
    secondaryIPs: z.array(z.unknown()).optional().describe('Passed through as in the rule.'),
  })
  .superRefine((rule, ctx) => {
    let problems = checkServiceArguments(rule.serviceArguments, ctx, ['serviceArguments'], true);
    const eps = rule.endpoints;
    if (eps === undefined) {
      // generated from `engines`
    } else if (!Array.isArray(eps)) {
      const r = engineGroupSchema.safeParse(eps, { error: scenarioErrorMap, reportInput: true });
      if (!r.success) forwardIssues(r.error.issues, ctx, ['endpoints']);
    } else {
      const groups = eps.filter(isEngineGroupItem).length;
      if (groups > 0 && groups < eps.length) {
        report(
          ctx,
          ['endpoints'],
          `${groups} of ${eps.length} items are engine groups`,
          'mixes engine groups and explicit endpoints',
          'all engine groups or all explicit endpoints',
        );
        problems += 1;
      } else if (groups > 0) {
        eps.forEach((g, i) => {
          const r = engineGroupSchema.safeParse(g, { error: scenarioErrorMap, reportInput: true });
          if (!r.success) forwardIssues(r.error.issues, ctx, ['endpoints', i]);
        });
      } else {
        problems += checkEndpointList(eps, ctx, []);
        if (problems === 0)
          checkWholeRule({ serviceArguments: rule.serviceArguments, endpoints: eps }, ctx, []);
        return;
      }
    }
    if (problems === 0) checkWholeRule({ serviceArguments: rule.serviceArguments }, ctx, []);
  })
  .describe(
    "A loxilb load-balancer rule as the management API takes it: serviceArguments in the spec's field names (paste your rule) and endpoints.",
  );

const envRecord = z
  .record(z.string(), z.union([z.string(), z.number()]))
  .superRefine((env, ctx) => checkEnv(env, ctx, []));
JSON_OVERRIDES.set(envRecord, () => ({
  type: 'object',
  description:
    'Process environment of the gateway: LLB_FC_* values (strings, as in the environment), used where the rule declares nothing.',
  propertyNames: { pattern: '^LLB_(FC|PD)_[A-Z_]+$' },
  additionalProperties: { type: ['string', 'number'] },
}));

/** SMG's admission-control settings, by its own names. */
export const smgSchema = z
  .strictObject({
    max_concurrent_requests: z
      .int()
      .default(-1)
      .describe(
        '--max-concurrent-requests: requests holding a permit at once; <= 0 turns admission control off.',
      ),
    queue_size: z
      .int()
      .min(0)
      .default(100)
      .describe('--queue-size: requests waiting for a permit; 0 disables the queue.'),
    queue_timeout_secs: z
      .int()
      .min(0)
      .default(60)
      .describe(
        '--queue-timeout-secs: longest wait before 503 admission_queue_timeout, s. Must be > 0 when queue_size > 0.',
      ),
    rate_limit_tokens_per_second: z
      .int()
      .min(0)
      .optional()
      .describe('--rate-limit-tokens-per-second: token refill per second; unset or 0 means no refill.'),
  })
  .superRefine((s, ctx) => {
    if (s.queue_size > 0 && s.queue_timeout_secs === 0) {
      report(
        ctx,
        ['queue_timeout_secs'],
        0,
        `0 is refused while queue_size is ${s.queue_size}`,
        'an integer > 0 while queue_size > 0',
      );
    }
  })
  .meta({
    id: 'Smg',
    description:
      "SMG's gateway-wide admission control (standing-concurrency cap, FIFO queue, token-bucket refill).",
  });

/** Largest number of fallback pools a scenario declares. */
export const MAX_FALLBACK_POOLS = 16;
/** A fallback pool's name: a policy's pool name (gate/policy/schema.ts). */
const POOL_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

/** A fallback pool of `gate.fallback_pools`: engines of its own, behind no gate of this scenario. */
const fallbackPoolSchema = z
  .strictObject({
    engines: z
      .array(engineGroupSchema)
      .min(1)
      .max(64)
      .describe(
        'Its engine groups (role normal): the engines a request degraded to this pool runs on, picked round-robin among those up.',
      ),
  })
  .meta({
    id: 'FallbackPool',
    description:
      "A pool a policy's `degrade: [{kind: pool, pool: NAME}]` sends requests to: behind the proxy, the rule whose serviceArguments.name is NAME, reached past its gate.",
  });

export const gateSchema = z
  .strictObject({
    rule: ruleSchema.optional(),
    env: envRecord.optional(),
    smg: smgSchema.optional(),
    policy: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'A policy file (docs/policy.md), relative to the scenario file: admission goes through the policy (classes, weighted seats, deadlines, five dispositions), in front of the rule or SMG settings.',
      ),
    fallback_pools: z
      .record(z.string(), fallbackPoolSchema)
      .optional()
      .describe(
        "Fallback pools by name, each the pool a policy's pool degrade of that name sends requests to (docs/policy.md). Only with gate.policy; each must be named by a degrade of the policy, and each pool degrade must name one of them.",
      ),
  })
  .superRefine((g, ctx) => {
    const expected = 'either rule (with optional env) or smg';
    if (g.rule === undefined && g.smg === undefined)
      report(ctx, [], g, `gives neither rule nor smg`, expected);
    if (g.rule !== undefined && g.smg !== undefined)
      report(ctx, ['smg'], g.smg, 'is given with rule', expected);
    if (g.env !== undefined && g.smg !== undefined)
      report(ctx, ['env'], g.env, 'is only for rule (LLB_FC_* are loxilb settings)', expected);
    const pools = g.fallback_pools === undefined ? [] : Object.keys(g.fallback_pools);
    if (pools.length > 0 && g.policy === undefined)
      report(
        ctx,
        ['fallback_pools'],
        pools.join(', '),
        'is given without gate.policy (only a policy degrades to a pool)',
        'gate.policy with a pool degrade naming each fallback pool',
      );
    for (const name of pools)
      if (!POOL_NAME.test(name))
        report(
          ctx,
          ['fallback_pools', name],
          name,
          `${JSON.stringify(name)} is not a pool name (a lower-case letter, then up to 62 letters, digits, _ or -)`,
          'a pool name as the policy writes it',
        );
    if (pools.length > MAX_FALLBACK_POOLS)
      report(
        ctx,
        ['fallback_pools'],
        pools.length,
        `declares ${pools.length} pools, above the maximum ${MAX_FALLBACK_POOLS}`,
        `at most ${MAX_FALLBACK_POOLS} fallback pools`,
      );
  })
  .describe(
    'The admission gate: a loxilb rule (the capacity gate; set fc_mode off for no gate) or the SMG dialect.',
  );

// ---------------------------------------------------------------------------------------------
// Telemetry and health

const endpointSelector = z.union([z.int().min(0).max(L.engines), z.string().min(1).max(256)], {
  error: () =>
    encode({
      detail: 'is not an endpoint index, IP:port or engine group name',
      expected: 'an endpoint index, IP:port or engine group name',
    }),
});
const selectors = z
  .array(endpointSelector)
  .min(1)
  .describe(
    'Endpoints: indexes in pool order (from 0), IP:port ids, or engine group names (all of the group).',
  );

const outageSchema = z.strictObject({
  at_s: nonNegative(L.s).describe('Start, s from the start of the run.'),
  duration_s: positive(L.s).describe('Length, s.'),
  endpoints: selectors.optional().describe('Endpoints whose scrapes fail. Default all.'),
});

export const telemetrySchema = z
  .strictObject({
    scrape_interval_s: positive(L.s)
      .default(10)
      .describe("How often the gateway scrapes each engine's /metrics, s."),
    scrape_failure_probability: share().default(0).describe('Chance that one scrape fails, 0..1.'),
    scrape_latency_ms: nonNegative(L.ms)
      .default(0)
      .describe('Time a scrape takes, ms (the reading is as old as this when it lands).'),
    ttft_ewma_alpha: z
      .number()
      .positive()
      .max(1)
      .optional()
      .describe("Weight of a new TTFT sample in the per-endpoint average. Default: the gate's."),
    outages: z.array(outageSchema).default([]).describe('Windows in which scrapes fail.'),
  })
  .describe(
    'How the gateway sees engine telemetry: scrapes every interval, with failures, latency and outages.',
  );

export const healthSchema = z
  .strictObject({
    probe_interval_s: positive(L.s).default(5).describe('Health probe period per endpoint, s.'),
    probe_timeout_ms: positive(L.ms)
      .default(1000)
      .describe('A probe not answered within this is failed, ms.'),
    unhealthy_threshold: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(3)
      .describe('Consecutive failed probes before an endpoint leaves service.'),
    healthy_threshold: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(2)
      .describe('Consecutive good probes before it returns (and warms up).'),
    circuit_breaker: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Open the breaker on consecutive request failures.'),
        failure_threshold: z
          .int()
          .min(1)
          .max(1_000_000)
          .default(5)
          .describe('Consecutive failed requests that open it.'),
        open_s: positive(L.s).default(30).describe('How long it stays open before a trial request, s.'),
        success_threshold: z
          .int()
          .min(1)
          .max(1_000_000)
          .default(1)
          .describe('Good trial requests that close it again.'),
      })
      .prefault({})
      .describe('Per-endpoint circuit breaker.'),
  })
  .describe(
    'Health probes and the circuit breaker that take endpoints out of service and back (a return triggers warm-up).',
  );

// ---------------------------------------------------------------------------------------------
// Timeline

const at = { at_s: nonNegative().describe('When, s from the start of the run.') };

/** `pool` of an engine event: act on a fallback pool's engines instead of the main pool's. */
const onPool = {
  pool: z
    .string()
    .min(1)
    .max(63)
    .optional()
    .describe(
      "A fallback pool of gate.fallback_pools: the event acts on that pool's engines, and its endpoints resolve against that pool (indexes within it from 0, its IP:port ids, its engine group names). Default: the main pool.",
    ),
};

export const timelineEventSchema = z
  .discriminatedUnion('event', [
    z
      .strictObject({
        event: z.literal('replace'),
        ...at,
        serviceArguments: replaceArguments,
        endpoints: replaceEndpoints.optional(),
      })
      .describe('A runtime replace POST of the rule: the stored rule with these serviceArguments.'),
    z
      .strictObject({
        event: z.literal('maintenance'),
        ...at,
        enabled: z.boolean().describe('true drains, false restores.'),
      })
      .describe('PUT /netlox/v1/maintenance: drain enforcing pools, or restore admission.'),
    z
      .strictObject({ event: z.literal('endpoint_down'), ...at, ...onPool, endpoints: selectors })
      .describe('Endpoints fail (probes and requests) until an endpoint_up.'),
    z
      .strictObject({ event: z.literal('endpoint_up'), ...at, ...onPool, endpoints: selectors })
      .describe('Endpoints answer again; they return to service after the health threshold and warm up.'),
    z
      .strictObject({
        event: z.literal('flap'),
        ...at,
        ...onPool,
        endpoints: selectors,
        period_s: positive(L.s).describe('One down-and-up cycle, s.'),
        down_s: positive(L.s)
          .optional()
          .describe('Down part of each cycle, s, below period_s. Default half the period.'),
        count: z.int().min(1).max(1_000_000).describe('Number of cycles.'),
      })
      .describe('Endpoints go down and up repeatedly.'),
    z
      .strictObject({
        event: z.literal('scrape_outage'),
        ...at,
        duration_s: positive(L.s).describe('Length, s.'),
        endpoints: selectors.optional().describe('Default all.'),
      })
      .describe("Scrapes of the engines' /metrics fail for a while (telemetry goes stale)."),
    z
      .strictObject({
        event: z.literal('engine_slowdown'),
        ...at,
        ...onPool,
        factor: z.number().min(1).max(1_000_000).describe('Step-time multiplier, >= 1.'),
        duration_s: positive(L.s).optional().describe('Length, s. Default: to the end.'),
        endpoints: selectors.optional().describe('Default all.'),
      })
      .describe('Engines get slower without errors (a provider slowdown).'),
    z
      .strictObject({
        event: z.literal('tool_slowdown'),
        ...at,
        factor: z.number().min(1).max(1_000_000).describe('Tool-call time multiplier, >= 1.'),
        duration_s: positive(L.s).optional().describe('Length, s. Default: to the end.'),
      })
      .describe(
        "Clients' tool and retrieval calls (clients' tool_ms) get slower while inference stays healthy: a call that starts during it takes factor times its drawn time.",
      ),
    z
      .strictObject({
        event: z.literal('capacity_loss'),
        ...at,
        ...onPool,
        share: z
          .number()
          .positive()
          .max(1)
          .describe('Share of the engines lost, 0..1 (rounded, at least 1): the last ones in pool order.'),
        duration_s: positive(L.s).optional().describe('Length, s. Default: to the end.'),
      })
      .describe('A share of the engines goes down at once.'),
    z
      .strictObject({
        event: z.literal('defer_store_outage'),
        ...at,
        duration_s: positive(L.s).describe('Length, s.'),
      })
      .describe(
        "The policy's defer store fails for a while: every call throws, as a full disk or a dead SQLite file would. Only with gate.policy.",
      ),
    z
      .strictObject({
        event: z.literal('dependency_outage'),
        ...at,
        name: z
          .string()
          .min(1)
          .max(128)
          .describe("The dependency, as a class's depends_on in the policy names it."),
        duration_s: positive(L.s).optional().describe('Length, s. Default: to the end.'),
      })
      .describe(
        "A dependency the policy's classes name in depends_on opens for a while (behind the proxy: the rule of that name has no endpoint with its breaker closed): new requests of every class that depends on it are rejected with dependency_open, 503, no Retry-After (the reopen is not a promise). Only with gate.policy.",
      ),
    z
      .strictObject({
        event: z.literal('workload_shift'),
        ...at,
        tenant: z.string().min(1).optional().describe('Shift only this tenant (by id). Default all.'),
        arrival: arrivalSchema
          .optional()
          .describe('New arrival process from at_s (its start_ms defaults to at_s).'),
        prompt_tokens: distributionSchema.optional(),
        output_tokens: distributionSchema.optional(),
      })
      .superRefine((e, ctx) => {
        if (e.arrival === undefined && e.prompt_tokens === undefined && e.output_tokens === undefined) {
          report(ctx, [], e, 'changes nothing', 'at least one of arrival, prompt_tokens, output_tokens');
        }
      })
      .describe('From at_s, new token distributions and/or a new arrival process.'),
  ])
  .meta({
    id: 'TimelineEvent',
    description:
      'A timed event, by event: replace, maintenance, endpoint_down, endpoint_up, flap, scrape_outage, engine_slowdown, tool_slowdown, capacity_loss, defer_store_outage, dependency_outage or workload_shift.',
  });

// ---------------------------------------------------------------------------------------------
// The file

/** A scenario name that stays one path segment: no separators or control characters, not `.` or `..`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const SCENARIO_NAME = /^(?!\.\.?$)[^/\\\u0000-\u001f\u007f]+$/;
const SCENARIO_NAME_EXPECTED = 'a name without / or \\ or control characters, other than . and ..';

/** The highest rate an arrival process reaches, and the requests it sends at once (spikes, inline traces). */
function arrivalPeak(a: z.output<typeof arrivalSchema>): { rate: number; burst: number } {
  switch (a.kind) {
    case 'constant':
    case 'poisson':
      return { rate: a.rate_per_sec, burst: 0 };
    case 'ramp':
      return { rate: Math.max(a.from_rate_per_sec, a.to_rate_per_sec), burst: 0 };
    case 'step':
      return { rate: Math.max(...a.steps.map((x) => x.rate_per_sec)), burst: 0 };
    case 'spike':
      return { rate: a.base_rate_per_sec + (a.spike_rate_per_sec ?? 0), burst: a.spike_count ?? 0 };
    case 'diurnal':
      return { rate: a.mean_rate_per_sec + a.amplitude_per_sec, burst: 0 };
    case 'trace':
      return { rate: 0, burst: a.at_ms.length };
  }
}

/** Requests the open-loop arrivals may offer over `durationS` (an upper bound: every process at its peak). */
export function offeredBound(
  arrivals: readonly (z.output<typeof arrivalSchema> | undefined)[],
  durationS: number,
): number {
  let total = 0;
  for (const a of arrivals) {
    if (a === undefined) continue;
    const p = arrivalPeak(a);
    total += Math.min(a.max_arrivals ?? Number.POSITIVE_INFINITY, p.rate * durationS + p.burst);
  }
  return total;
}

export const scenarioFileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Ignored (for editors).'),
    name: z
      .string()
      .min(1)
      .max(128)
      .regex(SCENARIO_NAME, {
        error: (iss) =>
          encode({
            detail: `${show(iss.input)} is not a plain name (it must never become a path outside the output directory)`,
            expected: SCENARIO_NAME_EXPECTED,
          }),
      })
      .describe(
        'Short name of the scenario, used in reports and output directory names: no / or \\, no control characters, not . or ..; at most 128 characters.',
      ),
    description: z.string().default('').describe('What the scenario demonstrates.'),
    seed: z
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .default(1)
      .describe('Run seed: a run is a function of (scenario, seed). --seed overrides it.'),
    duration_s: positive(L.s)
      .max(86_400)
      .describe(
        'Simulated length of the run, s. Arrivals stop at the end; requests in flight are counted as still in the system.',
      ),
    warmup_s: nonNegative(L.s)
      .default(0)
      .describe('Leading part of the run excluded from the statistics, s; below duration_s.'),
    gate: gateSchema,
    engines: z
      .array(engineGroupSchema)
      .min(1)
      .optional()
      .describe('The engines, in pool order (or give them as engine groups in gate.rule.endpoints).'),
    telemetry: telemetrySchema.prefault({}),
    health: healthSchema.prefault({}),
    clients: clientsSchema,
    timeline: z.array(timelineEventSchema).default([]).describe('Timed events, in time order.'),
  })
  .superRefine(
    (f, ctx) => {
      const engines = (f.engines ?? []).reduce((n, g) => n + g.count, 0);
      if (engines > L.engines) {
        report(
          ctx,
          ['engines'],
          engines,
          `${engines} engines in all is above the maximum ${L.engines}`,
          `at most ${L.engines} engines over all groups`,
        );
      }
      const arrivals = [
        f.clients.arrival,
        ...(f.clients.tenants ?? []).map((t) => t.arrival),
        ...f.timeline.map((e) => (e.event === 'workload_shift' ? e.arrival : undefined)),
      ];
      const offered = offeredBound(arrivals, f.duration_s);
      if (offered > L.offeredRequests) {
        report(
          ctx,
          ['clients'],
          Math.round(offered),
          `the arrivals may offer about ${Math.round(offered)} requests over duration_s ${f.duration_s} (peak rates added, times the duration), above the maximum ${L.offeredRequests}`,
          `at most ${L.offeredRequests} requests offered: a lower rate or a shorter duration_s`,
        );
      }
      // Totals over fields are only meaningful once every field is within its own bounds.
    },
    { when: (payload) => payload.issues.length === 0 },
  )
  .meta({
    title: 'Sluice scenario',
    description:
      'A Sluice scenario: the gate, the engines behind it, the clients in front of it, and what happens when.',
  });

/** A scenario file as validated by the schema (snake_case, defaults applied, not yet cross-checked). */
export type ScenarioFile = z.output<typeof scenarioFileSchema>;
export type ArrivalSpec = z.output<typeof arrivalSchema>;
export type DistributionSpec = z.output<typeof distributionSchema>;
export type TenantSpec = z.output<typeof tenantSchema>;
export type EnvelopeSpec = z.output<typeof envelopeSchema>;
export type RetrySpec = z.output<typeof retrySchema>;
export type ClosedLoopSpec = z.output<typeof closedLoopSchema>;
export type TraceSpec = z.output<typeof traceSchema>;
export type ClientsSpec = z.output<typeof clientsSchema>;
export type EngineGroupSpec = z.output<typeof engineGroupSchema>;
export type SmgSettings = z.output<typeof smgSchema>;
export type TelemetrySpec = z.output<typeof telemetrySchema>;
export type HealthSpec = z.output<typeof healthSchema>;
export type TimelineEventSpec = z.output<typeof timelineEventSchema>;
export type { IssueText };
