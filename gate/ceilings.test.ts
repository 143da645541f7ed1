import { describe, expect, it } from 'vitest';
import { EP1, EP2, Harness, rule } from '../test/gate-harness.js';
import type { Leg } from './permit.js';

const PD_EPS = [
  { endpointIP: '10.0.0.1', targetPort: 8000, role: 'prefill' },
  { endpointIP: '10.0.0.2', targetPort: 8000, role: 'prefill' },
  { endpointIP: '10.0.0.3', targetPort: 8000, role: 'decode' },
];

describe('ceilings', () => {
  it('holds the service ceiling: the 17th of the spec example waits, the 33rd waiter is refused 429', () => {
    const h = new Harness();
    h.gate.apply(
      rule({
        fc_mode: 'enforce',
        fc_max_outstanding: 16,
        fc_ep_max_inflight: 8,
        fc_max_queue_depth: 32,
        fc_max_queue_wait_ms: 5000,
      }),
    );
    for (let i = 0; i < 16; i++) h.permit();
    for (let i = 0; i < 32; i++) h.ticket();
    const r = h.refusal();
    expect([r.status, r.reason]).toEqual([429, 'queue_full']);
    expect(h.pool.endpoints.map((e) => e.inflight)).toEqual([8, 8]);
  });

  it('spreads requests over endpoints by weight', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce' }, [
        { endpointIP: '198.51.100.11', targetPort: 8000, weight: 3 },
        { endpointIP: '198.51.100.12', targetPort: 8000, weight: 1 },
      ]),
    );
    const ids = Array.from({ length: 8 }, () => h.permit().endpointId);
    expect(ids.filter((x) => x === EP1)).toHaveLength(6);
    expect(ids.filter((x) => x === EP2)).toHaveLength(2);
  });

  it('spills from a full preferred endpoint to another with room, and queues when all are full', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_ep_max_inflight: 1, fc_max_queue_depth: 2 }));
    expect(h.permit({ preferredEndpoint: EP1 }).endpointId).toBe(EP1);
    expect(h.permit({ preferredEndpoint: EP1 }).endpointId).toBe(EP2);
    expect(h.admit({ preferredEndpoint: EP1 }).kind).toBe('queued');
    const r = h.refusal({ protocol: 'h2' });
    expect([r.reason, r.headers.limit, r.ceiling]).toEqual(['capacity_shed', 1, 'endpoint']);
  });

  it('refuses 503 admission_no_capacity when no endpoint is healthy, closing the connection', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 4, fc_max_queue_depth: 4 }));
    h.gate.setEndpointHealth('192.0.2.10:8080/tcp', EP1, false);
    h.gate.setEndpointHealth('192.0.2.10:8080/tcp', EP2, false);
    const r = h.refusal();
    expect([r.status, r.error, r.reason, r.keepConnection]).toEqual([
      503,
      'admission_no_capacity',
      'no_healthy_capacity',
      false,
    ]);
  });

  it('wakes a waiter when an endpoint returns to service', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_ep_max_inflight: 1, fc_max_queue_depth: 2 }, [
        { endpointIP: '198.51.100.11', targetPort: 8000 },
        { endpointIP: '198.51.100.12', targetPort: 8000 },
      ]),
    );
    h.gate.setEndpointHealth('192.0.2.10:8080/tcp', EP2, false);
    h.permit();
    h.ticket({}, 'w');
    h.gate.setEndpointHealth('192.0.2.10:8080/tcp', EP2, true);
    expect(h.grants.map((g) => [g.ticket.context, g.permit.endpointId])).toEqual([['w', EP2]]);
  });

  it('counts a P/D request whose leg is refused once in decisions_total: as capacity_shed, never also admitted', () => {
    const h = new Harness();
    h.gate.apply(
      rule(
        { fc_mode: 'enforce', fc_max_outstanding: 4, fc_prefill_max_inflight: 1, fc_decode_max_inflight: 1 },
        PD_EPS,
        {
          pd_disagg_mode: true,
        },
      ),
    );
    const first = h.permit({ pd: true });
    expect('endpointId' in first.openLeg('prefill')).toBe(true);
    expect('endpointId' in first.openLeg('decode')).toBe(true);
    const second = h.permit({ pd: true });
    expect('endpointId' in second.openLeg('prefill')).toBe(true);
    const refused = second.openLeg('decode'); // the one decode endpoint is full
    expect('status' in refused && refused.reason).toBe('capacity_shed');
    second.release();
    const counts = { admitted: h.count('admitted'), capacity_shed: h.count('capacity_shed') };
    expect(counts).toEqual({ admitted: 1, capacity_shed: 1 });
  });

  it('counts a P/D request admitted when it ends before opening a decode leg (a failed prefill, a client gone)', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 4 }, PD_EPS, { pd_disagg_mode: true }));
    const p = h.permit({ pd: true });
    (p.openLeg('prefill') as Leg).close();
    expect(h.count('admitted')).toBe(0); // not decided yet
    p.release();
    expect(h.count('admitted')).toBe(1);
  });

  it('takes one service unit and one admitted for a P/D request however many legs it opens', () => {
    const h = new Harness();
    h.gate.apply(
      rule(
        { fc_mode: 'enforce', fc_max_outstanding: 2, fc_prefill_max_inflight: 1, fc_decode_max_inflight: 2 },
        PD_EPS,
        {
          pd_disagg_mode: true,
        },
      ),
    );
    const p = h.permit({ pd: true });
    const pre = p.openLeg('prefill') as Leg;
    const dec = p.openLeg('decode') as Leg;
    expect([pre.role, dec.role, dec.endpointId]).toEqual(['prefill', 'decode', '10.0.0.3:8000']);
    expect(h.pool.inflight).toBe(1);
    expect(h.count('admitted')).toBe(1);
    pre.close();
    expect(h.pool.endpoints.map((e) => e.inflight)).toEqual([0, 0, 1]);
    expect(h.pool.inflight).toBe(1);
    p.release();
    expect(h.pool.endpoints.map((e) => e.inflight)).toEqual([0, 0, 0]);
    expect(h.pool.inflight).toBe(0);
  });

  it('refuses a role leg over its role ceiling instead of letting it wait', () => {
    const h = new Harness();
    h.gate.apply(
      rule(
        { fc_mode: 'enforce', fc_max_outstanding: 4, fc_max_queue_depth: 4, fc_decode_max_inflight: 1 },
        PD_EPS,
        {
          pd_disagg_mode: true,
        },
      ),
    );
    const a = h.permit({ pd: true });
    expect('role' in a.openLeg('decode')).toBe(true);
    const b = h.permit({ pd: true });
    const r = b.openLeg('decode');
    expect('status' in r && [r.status, r.error, r.headers.limit]).toEqual([429, 'admission_capacity', 1]);
    expect(h.pool.queue.length).toBe(0);
    expect(h.count('capacity_shed')).toBe(1);
  });

  it('moves a leg by taking the new endpoint first, and refuses the move keeping the old unit when it is full', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_max_outstanding: 4, fc_prefill_max_inflight: 1 }, PD_EPS, {
        pd_disagg_mode: true,
      }),
    );
    const a = h.permit({ pd: true });
    const legA = a.openLeg('prefill', '10.0.0.1:8000') as Leg;
    expect(legA.move('10.0.0.2:8000')).toBe(true);
    expect(h.pool.endpoints.map((e) => e.inflight)).toEqual([0, 1, 0]);
    const b = h.permit({ pd: true });
    const legB = b.openLeg('prefill', '10.0.0.1:8000') as Leg;
    expect(legB.move('10.0.0.2:8000')).toBe(false);
    expect(legB.endpointId).toBe('10.0.0.1:8000');
    expect(h.pool.endpoints.map((e) => e.inflight)).toEqual([1, 1, 0]);
  });

  it('counts underflow instead of wrapping when a unit that was never taken is given back', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 2 }));
    const p = h.permit();
    h.pool.inflight = 0; // simulate a bookkeeping defect elsewhere
    p.release();
    expect(h.pool.inflight).toBe(0);
    expect(h.gate.anomalies.underflow).toBe(1);
  });

  it('makes release idempotent: a second release moves nothing and counts unknown_permit', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 2 }));
    const p = h.permit();
    h.permit();
    p.release();
    p.release();
    expect(h.pool.inflight).toBe(1);
    expect(h.gate.anomalies.unknown_permit).toBe(1);
    expect(h.gate.anomalies.underflow).toBe(0);
  });
});
