import { describe, expect, it } from 'vitest';
import { EP1, EP2, Harness, KEY, rule } from '../test/gate-harness.js';
import { collect } from './metrics.js';

describe('modes', () => {
  it('off leaves dispatch unchanged, moves no counter, and still exports the pool with mode 0', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'off', fc_max_outstanding: 1 }));
    for (let i = 0; i < 3; i++) expect(h.admit().kind).toBe('bypass');
    expect(h.admit({ inference: false })).toMatchObject({ kind: 'bypass', counted: false });
    expect(h.pool.inflight).toBe(0);
    expect(h.pool.decisions.every((n) => n === 0)).toBe(true);
    const mode = collect(h.gate).find((f) => f.name === 'loxilb_ai_admission_mode')!;
    expect(mode.samples).toEqual([
      { name: 'loxilb_ai_admission_mode', labels: { service: '192.0.2.10:8080', pool: '-' }, value: 0 },
    ]);
  });

  it('observe admits everything and counts observe_would_shed at each ceiling that would have refused', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'observe', fc_max_outstanding: 2, fc_ep_max_inflight: 1 }));
    h.permit();
    h.permit();
    const d = h.admit({ protocol: 'h2' });
    expect(d.kind).toBe('admit');
    if (d.kind === 'admit')
      expect(d.observe).toEqual({ outcome: 'observe_would_shed', ceilings: ['service', 'endpoint'] });
    expect(h.count('observe_would_shed')).toBe(2);
    expect(h.count('admitted')).toBe(3);
    expect(h.pool.inflight).toBe(3);
    expect(h.pool.observeCounts.service.shed).toBe(1);
    expect(h.pool.observeCounts.endpoint.shed).toBe(1);
  });

  it('observe counts observe_would_queue where enforce would have parked the request, and never queues', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'observe', fc_max_outstanding: 1, fc_max_queue_depth: 4 }));
    h.permit();
    const d = h.admit();
    expect(d.kind).toBe('admit');
    expect(h.count('observe_would_queue')).toBe(1);
    expect(h.pool.queue.length).toBe(0);
  });

  it('observe counts a would-shed, not a would-queue, when no endpoint is healthy: enforce answers 503 at once', () => {
    const enforce = new Harness();
    const observe = new Harness();
    for (const [h, mode] of [
      [enforce, 'enforce'],
      [observe, 'observe'],
    ] as const) {
      h.gate.apply(
        rule({ fc_mode: mode, fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 1000 }),
      );
      h.gate.setEndpointHealth(KEY, EP1, false);
      h.gate.setEndpointHealth(KEY, EP2, false);
    }
    expect(enforce.refusal().reason).toBe('no_healthy_capacity');
    const d = observe.admit();
    expect(d.kind).toBe('admit');
    expect(d.kind === 'admit' && d.observe?.outcome).toBe('observe_would_shed');
    expect([observe.count('observe_would_shed'), observe.count('observe_would_queue')]).toEqual([1, 0]);
  });

  it('observe counts a P/D request with no healthy role endpoint as a would-shed', () => {
    const h = new Harness();
    h.gate.apply(
      rule(
        { fc_mode: 'observe', fc_max_queue_depth: 4, fc_max_queue_wait_ms: 1000 },
        [
          { endpointIP: '198.51.100.21', targetPort: 8000, role: 'prefill' },
          { endpointIP: '198.51.100.22', targetPort: 8000, role: 'decode' },
        ],
        { pd_disagg_mode: true },
      ),
    );
    h.gate.setEndpointHealth(KEY, '198.51.100.21:8000', false);
    h.gate.setEndpointHealth(KEY, '198.51.100.22:8000', false);
    const d = h.admit({ pd: true });
    expect(d.kind === 'admit' && d.observe?.outcome).toBe('observe_would_shed');
  });

  it('observe counts the tenant share too', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'observe', fc_max_outstanding: 4, fc_tenant_max_share_pct: 25 }));
    h.permit({ tenant: 'a' });
    const d = h.admit({ tenant: 'a', protocol: 'h2' });
    expect(d.kind === 'admit' && d.observe).toEqual({ outcome: 'observe_would_shed', ceilings: ['tenant'] });
    expect(h.pool.observeCounts.tenant.shed).toBe(1);
  });

  it('lets non-inference requests bypass the ceilings, counted bypass_non_inference', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 1 }));
    h.permit();
    const d = h.admit({ inference: false });
    expect(d.kind).toBe('bypass');
    expect(d.kind === 'bypass' && [EP1, EP2].includes(d.endpoint!)).toBe(true);
    expect(h.count('bypass_non_inference')).toBe(1);
    expect(h.pool.inflight).toBe(1);
  });

  it('moves the gauges under enforce even with every ceiling unlimited', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce' }));
    const p = h.permit();
    expect(h.pool.inflight).toBe(1);
    p.release();
    expect(h.pool.inflight).toBe(0);
  });
});
