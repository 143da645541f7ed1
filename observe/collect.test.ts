import { describe, expect, it } from 'vitest';
import type { Decision } from '../gate/index.js';
import type { RequestDescriptor } from '../sim/clients/request-factory.js';
import { ObserveCollector } from './collect.js';

const req = (tenant?: string): RequestDescriptor => ({
  id: 1,
  logicalId: 1,
  attempt: 1,
  tenant,
  promptTokens: 10,
  outputTokens: 10,
  stream: true,
  protocol: 'http1',
  pd: false,
  inference: true,
  sentAtMs: 0,
  firstSentAtMs: 0,
  deadlineMs: undefined,
  ttftSloMs: undefined,
});
const admit = (
  observe: {
    outcome: 'observe_would_shed' | 'observe_would_queue';
    ceilings: ('service' | 'endpoint' | 'tenant')[];
  } | null,
) => ({ kind: 'admit', permit: {} as never, observe }) as Decision;

describe('observe collector', () => {
  it('counts would-be refusals per ceiling, per tenant and over time', () => {
    const c = new ObserveCollector();
    c.decided(req('a'), admit(null), 0, 100);
    c.decided(req('a'), admit({ outcome: 'observe_would_shed', ceilings: ['service', 'endpoint'] }), 5, 1500);
    c.decided(req('b'), admit({ outcome: 'observe_would_queue', ceilings: ['tenant'] }), 3, 1600);
    expect([c.arrivals, c.wouldShed, c.wouldQueue, c.peakInflight]).toEqual([3, 1, 1, 6]);
    expect(c.perCeiling).toEqual({
      service: { shed: 1, queue: 0 },
      endpoint: { shed: 1, queue: 0 },
      tenant: { shed: 0, queue: 1 },
    });
    expect(c.tenants()).toEqual([
      { tenant: 'a', offered: 2, would_shed: 1, would_queue: 0 },
      { tenant: 'b', offered: 1, would_shed: 0, would_queue: 1 },
    ]);
    expect(c.overTime()).toEqual([
      { t_s: 0, arrivals: 1, would_shed: 0, would_queue: 0, peak_inflight: 1 },
      { t_s: 1, arrivals: 2, would_shed: 1, would_queue: 1, peak_inflight: 6 },
    ]);
  });

  it('gives the ceiling that sheds nothing (the peak in flight) and the one that sheds at most a share', () => {
    const c = new ObserveCollector();
    // 100 arrivals that met 0..9 executing, ten each.
    for (let met = 0; met < 10; met++)
      for (let i = 0; i < 10; i++) c.decided(req(), admit(null), met, met * 1000);
    expect(c.ceilingForShare(0)).toBe(10);
    expect(c.ceilingForShare(0.1)).toBe(9);
    expect(c.ceilingForShare(0.15)).toBe(9);
    expect(c.ceilingForShare(0.3)).toBe(7);
  });

  it('merges time buckets two by two past its bound, keeping the totals', () => {
    const c = new ObserveCollector();
    for (let s = 0; s < 2000; s++) c.decided(req(), admit(null), 0, s * 1000);
    const buckets = c.overTime();
    expect(buckets.length).toBeLessThanOrEqual(720);
    expect(c.bucketS).toBe(4);
    expect(buckets.reduce((n, b) => n + b.arrivals, 0)).toBe(2000);
  });
});
