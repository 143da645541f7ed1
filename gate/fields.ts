/**
 * The one table of the gate's rule fields: name, process-env fallback,
 * product default, bound and kind. Validation, resolution, fc_effective,
 * the docs and the scenario schema are all derived from it.
 */

/** How a field's value is written in a rule. */
export type FieldKind = 'int' | 'mode' | 'switch';

/** One `fc_*` rule field. */
export interface FieldSpec {
  /** The serviceArguments name, e.g. `fc_max_outstanding`. */
  readonly name: FcFieldName;
  /** Process environment variables consulted in order when the rule declares nothing. */
  readonly env: readonly string[];
  /** Product default when neither rule nor env declares a value. */
  readonly fallback: number | string;
  /** Upper bound for integers (inclusive). */
  readonly max?: number;
  /** Unit, for docs and messages. */
  readonly unit?: 'ms' | 'requests' | 'percent';
  readonly kind: FieldKind;
  /** One line for docs. */
  readonly doc: string;
}

/** The upper bound on every ceiling field. */
export const MAX_CEILING = 100_000;
/** The upper bound on fc_max_queue_depth. */
export const MAX_QUEUE_DEPTH = 65_536;
/** The upper bound on every window in milliseconds. */
export const MAX_WINDOW_MS = 3_600_000;
/** The upper bound on fc_tenant_max_share_pct. */
export const MAX_SHARE_PCT = 100;
/** Queue wait given to a rule with a depth and no window anywhere, in ms. */
export const DEFAULT_QUEUE_WAIT_WITH_DEPTH_MS = 5_000;
/** Default trust window for scraped telemetry, in ms. */
export const DEFAULT_TELEMETRY_STALE_MS = 30_000;
/** Memory a parked request may hold, in MiB: the queue's memory bound is depth × this. */
export const PARKED_REQUEST_MIB = 1;

export const FC_FIELD_NAMES = [
  'fc_mode',
  'fc_max_outstanding',
  'fc_ep_max_inflight',
  'fc_prefill_max_inflight',
  'fc_decode_max_inflight',
  'fc_max_queue_depth',
  'fc_max_queue_wait_ms',
  'fc_adaptive',
  'fc_ttft_target_ms',
  'fc_telemetry_stale_ms',
  'fc_warmup_ms',
  'fc_tenant_max_share_pct',
  'fc_expose_headers',
] as const;

export type FcFieldName = (typeof FC_FIELD_NAMES)[number];

export const FIELDS: Readonly<Record<FcFieldName, FieldSpec>> = {
  fc_mode: {
    name: 'fc_mode',
    env: ['LLB_FC_MODE'],
    fallback: 'off',
    kind: 'mode',
    doc: 'off, observe, enforce, or inherit (the process default).',
  },
  fc_max_outstanding: {
    name: 'fc_max_outstanding',
    env: ['LLB_FC_MAX_OUTSTANDING'],
    fallback: 0,
    max: MAX_CEILING,
    unit: 'requests',
    kind: 'int',
    doc: 'Pool-wide ceiling: executing inference requests, one unit each however many legs. 0 inherits; 0 in force is unlimited.',
  },
  fc_ep_max_inflight: {
    name: 'fc_ep_max_inflight',
    env: ['LLB_FC_EP_MAX_INFLIGHT'],
    fallback: 0,
    max: MAX_CEILING,
    unit: 'requests',
    kind: 'int',
    doc: 'Per-endpoint ceiling for the normal role.',
  },
  fc_prefill_max_inflight: {
    name: 'fc_prefill_max_inflight',
    env: ['LLB_FC_PREFILL_MAX_INFLIGHT', 'LLB_PD_MAX_INFLIGHT_PER_EP'],
    fallback: 0,
    max: MAX_CEILING,
    unit: 'requests',
    kind: 'int',
    doc: 'Per-endpoint ceiling for prefill legs.',
  },
  fc_decode_max_inflight: {
    name: 'fc_decode_max_inflight',
    env: ['LLB_FC_DECODE_MAX_INFLIGHT'],
    fallback: 0,
    max: MAX_CEILING,
    unit: 'requests',
    kind: 'int',
    doc: 'Per-endpoint ceiling for decode legs.',
  },
  fc_max_queue_depth: {
    name: 'fc_max_queue_depth',
    env: ['LLB_FC_MAX_QUEUE_DEPTH'],
    fallback: 0,
    max: MAX_QUEUE_DEPTH,
    unit: 'requests',
    kind: 'int',
    doc: 'Requests that may wait on the pool; 0 refuses over a ceiling at once.',
  },
  fc_max_queue_wait_ms: {
    name: 'fc_max_queue_wait_ms',
    env: ['LLB_FC_MAX_QUEUE_WAIT_MS'],
    fallback: 0,
    max: MAX_WINDOW_MS,
    unit: 'ms',
    kind: 'int',
    doc: 'Longest wait before 504 admission_queue_timeout; 5000 when a depth is set and no window is.',
  },
  fc_adaptive: {
    name: 'fc_adaptive',
    env: ['LLB_FC_ADAPTIVE'],
    fallback: 'off',
    kind: 'switch',
    doc: 'on, off, or inherit: the pool ceiling follows engine backpressure between a quarter and all of it.',
  },
  fc_ttft_target_ms: {
    name: 'fc_ttft_target_ms',
    env: ['LLB_FC_TTFT_TARGET_MS'],
    fallback: 0,
    max: MAX_WINDOW_MS,
    unit: 'ms',
    kind: 'int',
    doc: 'With adaptive on, tighten while an endpoint averages more than this to first token; 0 leaves TTFT out.',
  },
  fc_telemetry_stale_ms: {
    name: 'fc_telemetry_stale_ms',
    env: ['LLB_FC_TELEMETRY_STALE_MS'],
    fallback: DEFAULT_TELEMETRY_STALE_MS,
    max: MAX_WINDOW_MS,
    unit: 'ms',
    kind: 'int',
    doc: 'How long a scraped queue depth or TTFT average is trusted.',
  },
  fc_warmup_ms: {
    name: 'fc_warmup_ms',
    env: ['LLB_FC_WARMUP_MS'],
    fallback: 0,
    max: MAX_WINDOW_MS,
    unit: 'ms',
    kind: 'int',
    doc: 'Window over which a returning endpoint ramps from a quarter of its ceilings to all of them.',
  },
  fc_tenant_max_share_pct: {
    name: 'fc_tenant_max_share_pct',
    env: ['LLB_FC_TENANT_MAX_SHARE_PCT'],
    fallback: 0,
    max: MAX_SHARE_PCT,
    unit: 'percent',
    kind: 'int',
    doc: 'Share of the ceiling in force and of the depth one tenant may hold; 100 is no share.',
  },
  fc_expose_headers: {
    name: 'fc_expose_headers',
    env: ['LLB_FC_EXPOSE_HEADERS'],
    fallback: 'off',
    kind: 'switch',
    doc: 'on, off, or inherit: admitted responses carry the three admission headers.',
  },
};

/** Values a `mode` field may take in a rule. */
export const MODE_VALUES = ['off', 'observe', 'enforce', 'inherit'] as const;
/** Values a `switch` field may take in a rule. */
export const SWITCH_VALUES = ['on', 'off', 'inherit'] as const;

/** The gate's mode as a number, as the mode gauge exports it. */
export const MODE_NUMBER = { off: 0, observe: 1, enforce: 2 } as const;
export type GateMode = keyof typeof MODE_NUMBER;
