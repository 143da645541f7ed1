import { describe, expect, it } from 'vitest';
import { Harness, rule } from '../test/gate-harness.js';
import { makeRefusal, refusalBody, refusalHeaders } from './decisions.js';

describe('decisions a host turns into responses', () => {
  it('maps each refusal to the spec table: status, error, Retry-After and connection', () => {
    const heads = { inflight: 3, queued: 2, limit: 3 };
    const rows = (
      [
        'capacity_shed',
        'queue_full',
        'tenant_share',
        'no_healthy_capacity',
        'draining',
        'queue_timeout',
        'drained',
      ] as const
    ).map((reason) => {
      const r = makeRefusal(reason, heads, 4200, true, 'service');
      return [reason, r.status, r.error, r.retryAfterS, r.keepConnection];
    });
    expect(rows).toEqual([
      ['capacity_shed', 429, 'admission_capacity', 1, true],
      ['queue_full', 429, 'admission_capacity', 5, true],
      ['tenant_share', 429, 'admission_tenant_share', 1, true],
      ['no_healthy_capacity', 503, 'admission_no_capacity', 1, false],
      ['draining', 503, 'gateway_draining', 5, false],
      ['queue_timeout', 504, 'admission_queue_timeout', 5, false],
      ['drained', 503, 'admission_drained', 5, false],
    ]);
  });

  it('renders the refusal body and headers', () => {
    const r = makeRefusal('queue_timeout', { inflight: 16, queued: 32, limit: 16 }, 800, true, 'queue', 5012);
    expect(refusalBody(r)).toEqual({
      error: 'admission_queue_timeout',
      retry_after: 1,
      jitter_hint_ms: 500,
      queued_ms: 5012,
    });
    expect(refusalHeaders(r)).toEqual({
      'Retry-After': '1',
      'X-Loxilb-Admission-Inflight': '16',
      'X-Loxilb-Admission-Queued': '32',
      'X-Loxilb-Admission-Limit': '16',
      Connection: 'close',
    });
  });

  it('exposes the admission headers on admitted responses, counting the request itself, with the ceiling in force', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_max_outstanding: 16, fc_max_queue_depth: 4, fc_expose_headers: 'on' }),
    );
    h.permit();
    const p = h.permit();
    expect(p.exposeHeaders()).toEqual({ inflight: 2, queued: 0, limit: 16 });
  });

  it('exposes them in observe mode too, and not when the pool is off or the field is off', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'observe', fc_expose_headers: 'on' }));
    expect(h.permit().exposeHeaders()).toEqual({ inflight: 1, queued: 0, limit: 0 });
    const off = new Harness({ env: { LLB_FC_EXPOSE_HEADERS: 'on' } });
    off.gate.apply(rule({ fc_mode: 'enforce', fc_expose_headers: 'off' }));
    expect(off.permit().exposeHeaders()).toBeNull();
    const env = new Harness({ env: { LLB_FC_EXPOSE_HEADERS: 'on' } });
    env.gate.apply(rule({ fc_mode: 'enforce' }));
    expect(env.permit().exposeHeaders()).not.toBeNull();
  });
});
