import { describe, expect, it } from 'vitest';
import { Harness, rule } from '../test/gate-harness.js';
import { collect, renderPrometheus } from './metrics.js';

describe('metrics', () => {
  it('renders the pool families in the Prometheus text format with the spec names and labels', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_max_outstanding: 2, fc_ep_max_inflight: 1, fc_max_queue_depth: 4 }),
    );
    const a = h.permit();
    h.permit();
    h.ticket();
    h.clock.advance(30);
    a.release();
    const text = renderPrometheus(collect(h.gate));
    const L = 'service="192.0.2.10:8080",pool="-"';
    for (const line of [
      '# TYPE loxilb_ai_admission_mode gauge',
      `loxilb_ai_admission_mode{${L}} 2`,
      `loxilb_ai_admission_inflight{${L},role="service"} 2`,
      `loxilb_ai_admission_inflight{${L},role="normal"} 2`,
      `loxilb_ai_admission_limit{${L},role="service"} 2`,
      `loxilb_ai_admission_limit{${L},role="normal"} 1`,
      `loxilb_ai_admission_limit{${L},role="queue"} 4`,
      `loxilb_ai_admission_queued{${L}} 0`,
      '# TYPE loxilb_ai_admission_queue_wait_seconds histogram',
      `loxilb_ai_admission_queue_wait_seconds_bucket{${L},le="0.01"} 0`,
      `loxilb_ai_admission_queue_wait_seconds_bucket{${L},le="0.05"} 1`,
      `loxilb_ai_admission_queue_wait_seconds_bucket{${L},le="+Inf"} 1`,
      `loxilb_ai_admission_queue_wait_seconds_sum{${L}} 0.03`,
      `loxilb_ai_admission_queue_wait_seconds_count{${L}} 1`,
      `loxilb_ai_admission_decisions_total{${L},reason="admitted"} 3`,
      `loxilb_ai_admission_decisions_total{${L},reason="queued"} 1`,
      `loxilb_ai_admission_effective_limit{${L}} 2`,
      `loxilb_ai_admission_adapt_state{${L},state="off"} 1`,
      `loxilb_ai_admission_adapt_moves_total{${L},direction="down"} 0`,
      'loxilb_ai_admission_anomalies_total{kind="underflow"} 0',
      'loxilb_ai_admission_anomalies_total{kind="unknown_permit"} 0',
      'loxilb_ai_admission_anomalies_total{kind="tenant_table_full"} 0',
    ]) {
      expect(text.split('\n')).toContain(line);
    }
  });

  it('emits only the process-wide anomaly counters with no gated pool', () => {
    const h = new Harness();
    const text = renderPrometheus(collect(h.gate));
    expect(text).toBe(
      [
        '# HELP loxilb_ai_admission_anomalies_total Bookkeeping anomalies: underflow and unknown_permit are defects; tenant_table_full is load.',
        '# TYPE loxilb_ai_admission_anomalies_total counter',
        'loxilb_ai_admission_anomalies_total{kind="underflow"} 0',
        'loxilb_ai_admission_anomalies_total{kind="unknown_permit"} 0',
        'loxilb_ai_admission_anomalies_total{kind="tenant_table_full"} 0',
        '',
      ].join('\n'),
    );
  });

  it('escapes label values', () => {
    const text = renderPrometheus([
      { name: 'x', type: 'gauge', help: 'h', samples: [{ name: 'x', labels: { a: 'q"b\\c\nd' }, value: 1 }] },
    ]);
    expect(text).toContain('x{a="q\\"b\\\\c\\nd"} 1');
  });
});
