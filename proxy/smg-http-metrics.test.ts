import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ageBucket, SmgHttpMetrics } from './smg-http-metrics.js';

describe('SMG HTTP metrics', () => {
  it('puts in-flight ages in non-cumulative (gt, le] buckets of whole seconds, the last one +Inf', () => {
    expect([0, 30, 31, 60, 86400, 86401].map(ageBucket)).toEqual([0, 0, 1, 1, 10, 11]);
    const m = new SmgHttpMetrics();
    const rs = [new EventEmitter(), new EventEmitter(), new EventEmitter(), new EventEmitter()];
    const now = 100 * 86_400_000;
    m.track(rs[0]!, now - 30_999); // 30 s: (0, 30]
    m.track(rs[1]!, now - 45_000); // (30, 60]
    m.track(rs[2]!, now - 90_000_000); // 25 h: (86400, +Inf]
    m.track(rs[3]!, now - 45_500); // (30, 60], then closed
    rs[3]!.emit('close');
    const ages = m.collect(now).find((f) => f.name === 'smg_http_inflight_request_age_count')!;
    expect(ages.type).toBe('gauge');
    expect(ages.samples.filter((s) => s.value > 0).map((s) => [s.labels, s.value])).toEqual([
      [{ gt: '0', le: '30' }, 1],
      [{ gt: '30', le: '60' }, 1],
      [{ gt: '86400', le: '+Inf' }, 1],
    ]);
  });

  it('counts responses by status_code and error_code ("" when none), never a response that was not sent', () => {
    const m = new SmgHttpMetrics();
    m.response(200, null);
    m.response(429, 'admission_queue_full');
    m.response(429, 'admission_queue_full');
    m.response(0, null);
    const f = m.collect(0).find((x) => x.name === 'smg_http_responses_total')!;
    expect(f.type).toBe('counter');
    expect(f.samples.map((s) => [s.labels, s.value])).toEqual([
      [{ status_code: '200', error_code: '' }, 1],
      [{ status_code: '429', error_code: 'admission_queue_full' }, 2],
    ]);
  });
});
