import { describe, expect, test } from 'vitest';
import { numRequestsWaiting, parsePrometheusText, parseSampleLine } from './prom-text.js';

describe('Prometheus text parser', () => {
  test('comments, HELP/TYPE, labels with escapes, special values, timestamps', () => {
    const text = [
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
      '# TYPE vllm:num_requests_waiting gauge',
      'vllm:num_requests_waiting{model_name="we\\"ird\\\\model\\n",engine="0"} 2.0',
      'vllm:num_requests_waiting{model_name="m",engine="1"} 3 1700000000000',
      '# a free comment',
      'plain_metric 1e3',
      'nan_metric NaN',
      'inf_metric{a="b",} +Inf',
      '',
      'broken{a="b" 1',
      'also broken',
    ].join('\r\n');
    const p = parsePrometheusText(text);
    expect(p.types.get('vllm:num_requests_waiting')).toBe('gauge');
    expect(p.samples).toHaveLength(5);
    expect(p.samples[0]).toEqual({
      name: 'vllm:num_requests_waiting',
      labels: { model_name: 'we"ird\\model\n', engine: '0' },
      value: 2,
    });
    expect(p.samples[1]!.value).toBe(3);
    expect(p.samples[2]).toEqual({ name: 'plain_metric', labels: {}, value: 1000 });
    expect(Number.isNaN(p.samples[3]!.value)).toBe(true);
    expect(p.samples[4]).toEqual({ name: 'inf_metric', labels: { a: 'b' }, value: Number.POSITIVE_INFINITY });
    expect(p.badLines).toBe(2);
  });

  test('a label value may hold braces, commas and spaces', () => {
    expect(parseSampleLine('m{path="/a,b} c"} 4')).toEqual({
      name: 'm',
      labels: { path: '/a,b} c' },
      value: 4,
    });
  });

  test('waiting requests: summed over engines, both name generations, null when absent', () => {
    expect(
      numRequestsWaiting(
        'vllm:num_requests_waiting{engine="0"} 2.0\nvllm:num_requests_waiting{engine="1"} 1.0\n',
      ),
    ).toBe(3);
    expect(numRequestsWaiting('vllm_num_requests_waiting{model_name="m"} 4\n')).toBe(4);
    expect(numRequestsWaiting('vllm:num_requests_running 4\n')).toBeNull();
    expect(numRequestsWaiting('vllm:num_requests_waiting_total 4\n')).toBeNull();
  });
});
