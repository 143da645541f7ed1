import { describe, expect, it } from 'vitest';
import { EP1, Harness, KEY, rule } from '../test/gate-harness.js';

function warming(fc: Record<string, unknown> = {}): Harness {
  const h = new Harness();
  h.gate.apply(
    rule({ fc_mode: 'enforce', fc_ep_max_inflight: 8, fc_max_outstanding: 6, fc_warmup_ms: 10000, ...fc }, [
      { endpointIP: '198.51.100.11', targetPort: 8000 },
    ]),
  );
  return h;
}

describe('warm-up after a return to service', () => {
  it('ramps an endpoint ceiling of 8 from 2 through 5 to 8 over the window', () => {
    const h = warming();
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    const ep = h.pool.endpoints[0]!;
    const caps = [0, 5000, 10000].map((t) => {
      h.clock.advanceTo(t);
      return h.pool.capOf(ep);
    });
    expect(caps).toEqual([2, 5, 8]);
  });

  it('admits only up to the ramped ceiling, and counts the endpoint as warming', () => {
    const h = warming({ fc_max_outstanding: 0 });
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    h.permit();
    h.permit();
    expect(h.refusal({ protocol: 'h2' }).ceiling).toBe('endpoint');
    expect(h.gate.rules()[0]!.serviceArguments.fc_effective!.warming_endpoints).toBe(1);
    h.clock.advanceTo(10000);
    expect(h.gate.rules()[0]!.serviceArguments.fc_effective!.warming_endpoints).toBe(0);
  });

  it('wakes a waiter when the ramp opens a unit, at the next sweep', () => {
    const h = warming({ fc_max_queue_depth: 4, fc_max_outstanding: 0 });
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    h.permit();
    h.permit();
    h.ticket({}, 'w');
    h.clock.advanceTo(2000); // cap 2 + floor(6 * 0.2) = 3 at t=2000
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['w']);
  });

  it('keeps an unlimited role unlimited and does not ramp the service ceiling', () => {
    const h = warming({ fc_ep_max_inflight: 0 });
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    for (let i = 0; i < 6; i++) h.permit();
    expect(h.refusal({ protocol: 'h2' }).ceiling).toBe('service');
    expect(h.pool.warmingEndpoints()).toBe(0);
  });

  it('restarts the ramp on every return and ends it when the window is removed', () => {
    const h = warming();
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    h.clock.advanceTo(8000);
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    expect(h.pool.capOf(h.pool.endpoints[0]!)).toBe(2);
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_ep_max_inflight: 8, fc_max_outstanding: 6, fc_warmup_ms: 0 }, [
        { endpointIP: '198.51.100.11', targetPort: 8000 },
      ]),
    );
    expect(h.pool.capOf(h.pool.endpoints[0]!)).toBe(8);
  });

  it('gives a ceiling of 1 a floor of 1', () => {
    const h = warming({ fc_ep_max_inflight: 1 });
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    expect(h.pool.capOf(h.pool.endpoints[0]!)).toBe(1);
  });
});

describe('the limit header during warm-up', () => {
  it('carries the ramped endpoint ceiling in force, not the configured one', () => {
    const h = warming({ fc_max_outstanding: 0 });
    h.gate.setEndpointHealth(KEY, EP1, false);
    h.gate.setEndpointHealth(KEY, EP1, true);
    h.permit();
    h.permit();
    expect(h.refusal({ protocol: 'h2' }).headers.limit).toBe(2);
  });
});
