/**
 * Renders engine metrics as Prometheus text exposition format 0.0.4, the way vLLM's
 * `/metrics` does (Python prometheus_client): `# HELP` and `# TYPE` per family, counters
 * named with `_total`, histograms as cumulative `_bucket{le}` lines ending in `+Inf`, then
 * `_sum` and `_count`; numbers printed like Python floats (`8.0`, `+Inf`).
 *
 * Metric names drift across vLLM versions (vllm-project/vllm `vllm/v1/metrics/loggers.py`):
 * - `vllm:gpu_cache_usage_perc` was renamed `vllm:kv_cache_usage_perc` in 0.9.2, kept as a
 *   deprecated alias through 0.10 and hidden from 0.11.
 * - `vllm:time_per_output_token_seconds` was renamed `vllm:inter_token_latency_seconds` in
 *   0.11 (both exposed in 0.11; the old one hidden from 0.12).
 * The `version` argument picks the name set.
 */
import { escapeHelp, escapeLabel } from '../../gate/index.js';
import type { EngineMetricsSnapshot, HistogramSnapshot } from './metrics.js';

/** vLLM metric name sets. */
export type VllmMetricsVersion =
  /** V0 and V1 up to 0.9.1: `gpu_cache_usage_perc`, `time_per_output_token_seconds`. */
  | 'v0.9.1'
  /** 0.9.2–0.10.x: adds `kv_cache_usage_perc`, keeps `gpu_cache_usage_perc` (deprecated). */
  | 'v0.10'
  /** 0.11.x: `kv_cache_usage_perc`; both ITL names (`time_per_output_token_seconds` deprecated). */
  | 'v0.11'
  /** 0.12 and later: `kv_cache_usage_perc`, `inter_token_latency_seconds`. */
  | 'latest';

/** Every name set, oldest first. */
export const VLLM_METRICS_VERSIONS: readonly VllmMetricsVersion[] = ['v0.9.1', 'v0.10', 'v0.11', 'latest'];

type Labels = readonly (readonly [string, string])[];

interface Family {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  readonly help: string;
  readonly versions?: readonly VllmMetricsVersion[];
  readonly help0?: { readonly versions: readonly VllmMetricsVersion[]; readonly help: string };
  readonly value?: (s: EngineMetricsSnapshot) => number;
  readonly histogram?: (s: EngineMetricsSnapshot) => HistogramSnapshot;
  /** Samples with their full label sets, for families with extra labels. */
  readonly samples?: (s: EngineMetricsSnapshot) => { readonly labels: Labels; readonly value: number }[];
}

const DEPRECATED_TPOT = 'DEPRECATED: Use vllm:inter_token_latency_seconds instead.';
const DEPRECATED_GPU_CACHE = 'DEPRECATED: Use vllm:kv_cache_usage_perc instead.';

/** The families rendered, in order. The single source of names, types and help texts. */
const FAMILIES: readonly Family[] = [
  {
    name: 'vllm:num_requests_running',
    type: 'gauge',
    help: 'Number of requests in model execution batches.',
    value: (s) => s.numRequestsRunning,
  },
  {
    name: 'vllm:num_requests_waiting',
    type: 'gauge',
    help: 'Number of requests waiting to be processed.',
    value: (s) => s.numRequestsWaiting,
  },
  {
    name: 'vllm:gpu_cache_usage_perc',
    type: 'gauge',
    help: 'GPU KV-cache usage. 1 means 100 percent usage.',
    help0: {
      versions: ['v0.10'],
      help: `GPU KV-cache usage. 1 means 100 percent usage.${DEPRECATED_GPU_CACHE}`,
    },
    versions: ['v0.9.1', 'v0.10'],
    value: (s) => s.kvCacheUsage,
  },
  {
    name: 'vllm:kv_cache_usage_perc',
    type: 'gauge',
    help: 'KV-cache usage. 1 means 100 percent usage.',
    versions: ['v0.10', 'v0.11', 'latest'],
    value: (s) => s.kvCacheUsage,
  },
  {
    name: 'vllm:num_preemptions',
    type: 'counter',
    help: 'Cumulative number of preemption from the engine.',
    value: (s) => s.numPreemptions,
  },
  {
    name: 'vllm:prompt_tokens',
    type: 'counter',
    help: 'Number of prefill tokens processed.',
    value: (s) => s.promptTokens,
  },
  {
    name: 'vllm:generation_tokens',
    type: 'counter',
    help: 'Number of generation tokens processed.',
    value: (s) => s.generationTokens,
  },
  {
    name: 'vllm:request_success',
    type: 'counter',
    help: 'Count of successfully processed requests.',
    samples: (s) =>
      (['stop', 'length', 'abort'] as const).map((reason) => ({
        labels: [...engineLabels(s), ['finished_reason', reason]],
        value: s.requestSuccess[reason],
      })),
  },
  {
    name: 'vllm:request_prompt_tokens',
    type: 'histogram',
    help: 'Number of prefill tokens processed.',
    histogram: (s) => s.requestPromptTokens,
  },
  {
    name: 'vllm:request_generation_tokens',
    type: 'histogram',
    help: 'Number of generation tokens processed.',
    histogram: (s) => s.requestGenerationTokens,
  },
  {
    name: 'vllm:time_to_first_token_seconds',
    type: 'histogram',
    help: 'Histogram of time to first token in seconds.',
    histogram: (s) => s.timeToFirstTokenSeconds,
  },
  {
    name: 'vllm:time_per_output_token_seconds',
    type: 'histogram',
    help: 'Histogram of time per output token in seconds.',
    help0: { versions: ['v0.11'], help: `Histogram of time per output token in seconds.${DEPRECATED_TPOT}` },
    versions: ['v0.9.1', 'v0.10', 'v0.11'],
    histogram: (s) => s.interTokenLatencySeconds,
  },
  {
    name: 'vllm:inter_token_latency_seconds',
    type: 'histogram',
    help: 'Histogram of inter-token latency in seconds.',
    versions: ['v0.11', 'latest'],
    histogram: (s) => s.interTokenLatencySeconds,
  },
  {
    name: 'vllm:e2e_request_latency_seconds',
    type: 'histogram',
    help: 'Histogram of e2e request latency in seconds.',
    histogram: (s) => s.e2eRequestLatencySeconds,
  },
  {
    name: 'vllm:request_queue_time_seconds',
    type: 'histogram',
    help: 'Histogram of time spent in WAITING phase for request.',
    histogram: (s) => s.requestQueueTimeSeconds,
  },
  {
    name: 'vllm:request_inference_time_seconds',
    type: 'histogram',
    help: 'Histogram of time spent in RUNNING phase for request.',
    histogram: (s) => s.requestInferenceTimeSeconds,
  },
  {
    name: 'vllm:request_prefill_time_seconds',
    type: 'histogram',
    help: 'Histogram of time spent in PREFILL phase for request.',
    histogram: (s) => s.requestPrefillTimeSeconds,
  },
  {
    name: 'vllm:request_decode_time_seconds',
    type: 'histogram',
    help: 'Histogram of time spent in DECODE phase for request.',
    histogram: (s) => s.requestDecodeTimeSeconds,
  },
  {
    name: 'vllm:cache_config_info',
    type: 'gauge',
    help: 'Information of the LLMEngine CacheConfig',
    samples: (s) => [
      {
        labels: [
          ['block_size', String(s.cacheConfig.blockSize)],
          ['gpu_memory_utilization', String(s.cacheConfig.gpuMemoryUtilization)],
          ['num_gpu_blocks', String(s.cacheConfig.numGpuBlocks)],
          ['engine', s.engineIndex],
        ],
        value: 1,
      },
    ],
  },
];

/** Metric family names exposed under a name set (counters without `_total`), in order. */
export function metricFamilyNames(version: VllmMetricsVersion = 'latest'): string[] {
  return FAMILIES.filter((f) => f.versions === undefined || f.versions.includes(version)).map((f) => f.name);
}

/**
 * Renders one or more engines' metrics (e.g. data-parallel engines of one server) as a
 * Prometheus text exposition, ending in a newline.
 * @param version name set to use @default 'latest'
 */
export function renderPrometheus(
  snapshots: EngineMetricsSnapshot | readonly EngineMetricsSnapshot[],
  version: VllmMetricsVersion = 'latest',
): string {
  const list: readonly EngineMetricsSnapshot[] = Array.isArray(snapshots)
    ? snapshots
    : [snapshots as EngineMetricsSnapshot];
  const out: string[] = [];
  for (const f of FAMILIES) {
    if (f.versions !== undefined && !f.versions.includes(version)) continue;
    const name = f.type === 'counter' ? `${f.name}_total` : f.name;
    const help = f.help0?.versions.includes(version) ? f.help0.help : f.help;
    header(out, name, help, f.type);
    for (const s of list) {
      if (f.histogram) histogramLines(out, name, engineLabels(s), f.histogram(s));
      else if (f.value) out.push(sample(name, engineLabels(s), f.value(s)));
      else if (f.samples) for (const x of f.samples(s)) out.push(sample(name, x.labels, x.value));
    }
  }
  return `${out.join('\n')}\n`;
}

function engineLabels(s: EngineMetricsSnapshot): Labels {
  return [
    ['model_name', s.modelName],
    ['engine', s.engineIndex],
  ];
}

function header(out: string[], name: string, help: string, type: Family['type']): void {
  out.push(`# HELP ${name} ${escapeHelp(help)}`);
  out.push(`# TYPE ${name} ${type}`);
}

function histogramLines(out: string[], name: string, labels: Labels, h: HistogramSnapshot): void {
  let cumulative = 0;
  for (let i = 0; i <= h.bounds.length; i++) {
    cumulative += h.counts[i] as number;
    const le = i < h.bounds.length ? formatNumber(h.bounds[i] as number) : '+Inf';
    out.push(sample(`${name}_bucket`, [...labels, ['le', le]], cumulative));
  }
  out.push(sample(`${name}_sum`, labels, h.sum));
  out.push(sample(`${name}_count`, labels, h.count));
}

function sample(name: string, labels: Labels, value: number): string {
  const body = labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',');
  return `${name}{${body}} ${formatNumber(value)}`;
}

/** Escapes a label value: backslash, double quote and newline (the gate's one escaper). */
export const escapeLabelValue = escapeLabel;

/** Formats a sample value like Python's prometheus_client: `8.0`, `0.25`, `+Inf`, `NaN`. */
export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return `${v}.0`;
  return String(v);
}
