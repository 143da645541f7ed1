import { describe, expect, it } from 'vitest';
import { escapeLabelValue, formatNumber, metricFamilyNames, renderPrometheus } from './exposition.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { EngineMetricsRecorder } from './metrics.js';

function smallSnapshot(modelName = 'meta-llama/Llama-3.1-8B-Instruct'): EngineMetricsSnapshot {
  const r = new EngineMetricsRecorder(
    modelName,
    '0',
    { blockSize: 16, numGpuBlocks: 27500, gpuMemoryUtilization: 0.9 },
    100,
  );
  r.running = 8;
  r.waiting = 2;
  r.kvCacheUsage = 0.25;
  r.numPreemptions = 1;
  r.promptTokens = 300;
  r.generationTokens = 42;
  r.requestSuccess.stop = 3;
  r.requestSuccess.abort = 1;
  r.ttft.observe(0.005);
  r.ttft.observe(0.3);
  r.itl.observe(0.01);
  return r.snapshot();
}

/** Lines of one metric family (its HELP, TYPE and samples). */
function family(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith(`# HELP ${name} `) ||
        l.startsWith(`# TYPE ${name} `) ||
        /^([^ {]+)/.exec(l)?.[1]?.replace(/_(bucket|sum|count)$/, '') === name,
    );
}

const L = 'model_name="meta-llama/Llama-3.1-8B-Instruct",engine="0"';

describe('Prometheus exposition', () => {
  it('renders gauges and counters exactly as vLLM does', () => {
    const text = renderPrometheus(smallSnapshot());
    expect(family(text, 'vllm:num_requests_running')).toEqual([
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      `vllm:num_requests_running{${L}} 8.0`,
    ]);
    expect(family(text, 'vllm:kv_cache_usage_perc')).toEqual([
      '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
      '# TYPE vllm:kv_cache_usage_perc gauge',
      `vllm:kv_cache_usage_perc{${L}} 0.25`,
    ]);
    expect(family(text, 'vllm:request_success_total')).toEqual([
      '# HELP vllm:request_success_total Count of successfully processed requests.',
      '# TYPE vllm:request_success_total counter',
      `vllm:request_success_total{${L},finished_reason="stop"} 3.0`,
      `vllm:request_success_total{${L},finished_reason="length"} 0.0`,
      `vllm:request_success_total{${L},finished_reason="abort"} 1.0`,
    ]);
    expect(family(text, 'vllm:cache_config_info')).toEqual([
      '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
      '# TYPE vllm:cache_config_info gauge',
      'vllm:cache_config_info{block_size="16",gpu_memory_utilization="0.9",num_gpu_blocks="27500",engine="0"} 1.0',
    ]);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('renders a histogram with cumulative buckets, +Inf, _sum and _count', () => {
    const lines = family(renderPrometheus(smallSnapshot()), 'vllm:time_to_first_token_seconds');
    expect(lines.slice(0, 5)).toEqual([
      '# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.',
      '# TYPE vllm:time_to_first_token_seconds histogram',
      `vllm:time_to_first_token_seconds_bucket{${L},le="0.001"} 0.0`,
      `vllm:time_to_first_token_seconds_bucket{${L},le="0.005"} 1.0`,
      `vllm:time_to_first_token_seconds_bucket{${L},le="0.01"} 1.0`,
    ]);
    expect(lines).toContain(`vllm:time_to_first_token_seconds_bucket{${L},le="0.25"} 1.0`);
    expect(lines).toContain(`vllm:time_to_first_token_seconds_bucket{${L},le="0.5"} 2.0`);
    expect(lines).toContain(`vllm:time_to_first_token_seconds_bucket{${L},le="1.0"} 2.0`);
    expect(lines.slice(-4)).toEqual([
      `vllm:time_to_first_token_seconds_bucket{${L},le="2560.0"} 2.0`,
      `vllm:time_to_first_token_seconds_bucket{${L},le="+Inf"} 2.0`,
      `vllm:time_to_first_token_seconds_sum{${L}} 0.305`,
      `vllm:time_to_first_token_seconds_count{${L}} 2.0`,
    ]);
    expect(lines).toHaveLength(2 + 22 + 1 + 2);
  });

  it('produces only well-formed lines: HELP, TYPE, or name{labels} value', () => {
    const text = renderPrometheus([smallSnapshot(), { ...smallSnapshot(), engineIndex: '1' }], 'v0.11');
    const sampleLine =
      /^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\} (?:[-+]?[0-9.e+-]+|\+Inf|-Inf|NaN)$/;
    const lines = text.trimEnd().split('\n');
    for (const line of lines) {
      if (line.startsWith('# ')) expect(line).toMatch(/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/);
      else expect(line).toMatch(sampleLine);
    }
    const types = lines.filter((l) => l.startsWith('# TYPE')).map((l) => l.split(' ')[2]);
    expect(new Set(types).size).toBe(types.length);
    expect(lines.filter((l) => l.startsWith('vllm:num_requests_running{'))).toHaveLength(2);
  });

  it('escapes backslash, double quote and newline in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const text = renderPrometheus(smallSnapshot('we"ird\\model\n'));
    expect(text).toContain('vllm:num_requests_waiting{model_name="we\\"ird\\\\model\\n",engine="0"} 2.0');
  });

  it('formats numbers like Python prometheus_client', () => {
    expect([8, 0.25, 1e-7, Number.POSITIVE_INFINITY, Number.NaN].map(formatNumber)).toEqual([
      '8.0',
      '0.25',
      '1e-7',
      '+Inf',
      'NaN',
    ]);
  });

  it('picks the name set by vLLM version', () => {
    expect(metricFamilyNames('v0.9.1')).toContain('vllm:gpu_cache_usage_perc');
    expect(metricFamilyNames('v0.9.1')).not.toContain('vllm:kv_cache_usage_perc');
    expect(metricFamilyNames('v0.9.1')).not.toContain('vllm:inter_token_latency_seconds');
    expect(metricFamilyNames('v0.10')).toEqual(
      expect.arrayContaining(['vllm:gpu_cache_usage_perc', 'vllm:kv_cache_usage_perc']),
    );
    expect(metricFamilyNames('v0.11')).toEqual(
      expect.arrayContaining(['vllm:time_per_output_token_seconds', 'vllm:inter_token_latency_seconds']),
    );
    expect(metricFamilyNames('v0.11')).not.toContain('vllm:gpu_cache_usage_perc');
    expect(metricFamilyNames('latest')).not.toContain('vllm:time_per_output_token_seconds');
    const old = renderPrometheus(smallSnapshot(), 'v0.9.1');
    expect(old).toContain(`vllm:gpu_cache_usage_perc{${L}} 0.25`);
    expect(old).toContain(
      '# HELP vllm:time_per_output_token_seconds Histogram of time per output token in seconds.\n',
    );
    expect(renderPrometheus(smallSnapshot(), 'v0.11')).toContain(
      '# HELP vllm:time_per_output_token_seconds Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.\n',
    );
  });
});
