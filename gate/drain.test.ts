import { describe, expect, it } from 'vitest';
import { Harness, rule } from '../test/gate-harness.js';

describe('maintenance drain', () => {
  it('refuses new requests on enforcing pools 503 gateway_draining with Retry-After 5, ends waiters admission_drained oldest first, lets executing finish', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4 }));
    const running = h.permit();
    h.ticket({}, 'first');
    h.ticket({}, 'second');
    const view = h.gate.setMaintenance(true);
    expect(view).toEqual({ enabled: true, refusing_new_inference: true, in_flight_requests: 1 });
    expect(
      h.endings.map((e) => [e.ticket.context, e.refusal.status, e.refusal.error, e.refusal.retryAfterS]),
    ).toEqual([
      ['first', 503, 'admission_drained', 5],
      ['second', 503, 'admission_drained', 5],
    ]);
    const r = h.refusal();
    expect([r.status, r.error, r.retryAfterS, r.keepConnection]).toEqual([503, 'gateway_draining', 5, false]);
    expect(h.count('draining')).toBe(1);
    running.release();
    expect(h.grants).toHaveLength(0);
    expect(h.gate.maintenance().in_flight_requests).toBe(0);
    h.gate.setMaintenance(false);
    expect(h.admit().kind).toBe('admit');
  });

  it('keeps observe and off pools admitting during maintenance', () => {
    const h = new Harness();
    h.gate.apply(rule({ fc_mode: 'observe', fc_max_outstanding: 1 }));
    h.gate.setMaintenance(true);
    expect(h.admit().kind).toBe('admit');
    h.gate.apply(rule({ fc_mode: 'off' }));
    expect(h.admit().kind).toBe('bypass');
  });

  it('never claims a drain on a management plane with no data path attached', () => {
    const h = new Harness({ dataPathAttached: false });
    expect(h.gate.setMaintenance(true).refusing_new_inference).toBe(false);
  });
});
