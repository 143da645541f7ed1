import { describe, expect, it } from 'vitest';
import { EP1, EP2, Harness, KEY, rule } from '../test/gate-harness.js';

function adaptive(fc: Record<string, unknown> = {}): Harness {
  const h = new Harness();
  h.gate.apply(
    rule({
      fc_mode: 'enforce',
      fc_max_outstanding: 20,
      fc_max_queue_depth: 64,
      fc_max_queue_wait_ms: 60000,
      fc_adaptive: 'on',
      ...fc,
    }),
  );
  return h;
}

/** Reports engine queues on both endpoints, then lets one sweep run. */
function second(h: Harness, waiting1: number, waiting2 = 0): number {
  h.gate.reportEngine(KEY, EP1, waiting1);
  h.gate.reportEngine(KEY, EP2, waiting2);
  h.clock.advance(1000);
  return h.pool.effective;
}

describe('adaptive ceiling', () => {
  it('steps a backpressured ceiling of 20 down 16, 12, 9, 7, 5, 5', () => {
    const h = adaptive();
    const steps = Array.from({ length: 6 }, () => second(h, 3));
    expect(steps).toEqual([16, 12, 9, 7, 5, 5]);
    expect([h.pool.adaptState, h.pool.adaptReason, h.pool.adaptMovesDown]).toEqual([
      'tightened',
      'queued',
      5,
    ]);
  });

  it('takes a ceiling of 3 down to 1', () => {
    const h = adaptive({ fc_max_outstanding: 3 });
    expect([second(h, 1), second(h, 1), second(h, 1)]).toEqual([2, 1, 1]);
  });

  it('adds one unit per clear second up to the configured ceiling, waking the longest waiter for it', () => {
    const h = adaptive({ fc_max_outstanding: 5 });
    second(h, 2); // 5 -> 4
    expect(h.pool.effective).toBe(4);
    for (let i = 0; i < 4; i++) h.permit();
    h.ticket({}, 'oldest');
    h.ticket({}, 'next');
    expect(second(h, 0)).toBe(5);
    expect([h.pool.adaptState, h.pool.adaptReason, h.pool.adaptMovesUp]).toEqual(['open', 'clear', 1]);
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['oldest']);
    expect(second(h, 0)).toBe(5);
  });

  it('holds a tightened ceiling when telemetry goes stale, frozen, and wakes nobody', () => {
    const h = adaptive({ fc_telemetry_stale_ms: 3000 });
    second(h, 4);
    second(h, 4);
    expect(h.pool.effective).toBe(12);
    for (let i = 0; i < 12; i++) h.permit();
    h.ticket({}, 'waiting');
    h.clock.advance(2000); // the last reports (t=1000) stay fresh through the sweeps at 3000 and 4000
    expect(h.pool.effective).toBe(7);
    h.clock.advance(5000);
    expect([h.pool.effective, h.pool.adaptState, h.pool.adaptReason]).toEqual([7, 'frozen', 'stale']);
    expect(h.grants).toHaveLength(0);
    expect(h.pool.queue.length).toBe(1);
  });

  it('measures TTFT from admission, not arrival: a 4 s wait at the gate is left out', () => {
    const h = adaptive({ fc_ttft_target_ms: 2000, fc_max_outstanding: 1 });
    const first = h.permit({ preferredEndpoint: EP1 });
    h.ticket({ preferredEndpoint: EP1 }, 'waited');
    h.clock.advanceTo(4000);
    first.release();
    const waited = h.grants[0]!.permit;
    h.clock.advanceTo(4500);
    waited.firstDataEvent();
    expect(h.pool.endpoints.find((e) => e.id === EP1)!.ttftEwmaMs).toBe(500);
  });

  it('tightens with reason ttft while an endpoint averages over the target, as a (7·old+new)/8 average', () => {
    const h = adaptive({ fc_ttft_target_ms: 2000, fc_max_outstanding: 10 });
    const a = h.permit({ preferredEndpoint: EP1 });
    const b = h.permit({ preferredEndpoint: EP1 });
    h.clock.advanceTo(2500);
    a.firstDataEvent();
    h.clock.advanceTo(2900);
    b.firstDataEvent();
    const ep = h.pool.endpoints.find((e) => e.id === EP1)!;
    expect(ep.ttftEwmaMs).toBe((7 * 2500 + 2900) / 8);
    h.clock.advanceTo(3000);
    expect([h.pool.effective, h.pool.adaptReason]).toEqual([8, 'ttft']);
  });

  it('takes no TTFT sample without a target, and restarts the average after staleness', () => {
    const none = adaptive();
    const p = none.permit({ preferredEndpoint: EP1 });
    none.clock.advance(300);
    p.firstDataEvent();
    expect(Number.isNaN(none.pool.endpoints[0]!.ttftEwmaMs)).toBe(true);

    const h = adaptive({ fc_ttft_target_ms: 2000, fc_telemetry_stale_ms: 1000 });
    const x = h.permit({ preferredEndpoint: EP1 });
    h.clock.advanceTo(100);
    x.firstDataEvent();
    const y = h.permit({ preferredEndpoint: EP1 });
    h.clock.advanceTo(5000);
    y.firstDataEvent();
    expect(h.pool.endpoints[0]!.ttftEwmaMs).toBe(4900);
  });

  it('gives the configured ceiling back at once when adaptive is turned off', () => {
    const h = adaptive();
    second(h, 5);
    second(h, 5);
    expect(h.pool.effective).toBe(12);
    h.gate.apply(rule({ fc_adaptive: 'off' }));
    expect([h.pool.effective, h.pool.adaptState]).toEqual([20, 'off']);
  });

  it('keeps the effective value when the ceiling is raised while tightened, and follows it when open', () => {
    const h = adaptive();
    second(h, 5);
    h.gate.apply(rule({ fc_max_outstanding: 30 }));
    expect(h.pool.effective).toBe(16);
    const open = adaptive();
    open.gate.apply(rule({ fc_max_outstanding: 30 }));
    expect(open.pool.effective).toBe(30);
    open.gate.apply(rule({ fc_max_outstanding: 10 }));
    expect(open.pool.effective).toBe(10);
  });

  it('lifts a tightened ceiling to the new floor when a raise puts it below a quarter, and backpressure never widens it', () => {
    const h = adaptive({ fc_max_outstanding: 16 });
    for (let i = 0; i < 6; i++) second(h, 3); // 16 -> 12, 9, 7, 5, 4, 4
    expect(h.pool.effective).toBe(4);
    h.gate.apply(rule({ fc_max_outstanding: 100 }));
    expect([h.pool.effective, h.pool.adaptState]).toEqual([25, 'tightened']); // floor of 100
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push(second(h, 3));
    expect(seen).toEqual([25, 25, 25, 25]);
    expect(h.pool.adaptMovesUp).toBe(0);
  });

  it('keeps the ceiling in force within [quarter, all] of the configured one through any sequence of raises, cuts and seconds', () => {
    const h = adaptive({ fc_max_outstanding: 40 });
    const ceilings = [40, 100, 7, 64, 3, 1000, 16];
    for (const [i, c] of ceilings.entries()) {
      h.gate.apply(rule({ fc_max_outstanding: c }));
      for (let s = 0; s < 5; s++) {
        const before = h.pool.effective;
        const after = second(h, (i + s) % 3 === 0 ? 0 : 2);
        expect(after).toBeGreaterThanOrEqual(Math.max(1, Math.floor(c / 4)));
        expect(after).toBeLessThanOrEqual(c);
        if (h.pool.adaptReason === 'queued') expect(after).toBeLessThanOrEqual(before);
      }
    }
  });

  it('clamps the effective ceiling when the configured one is lowered below it, evicting nobody', () => {
    const h = adaptive();
    for (let i = 0; i < 12; i++) h.permit();
    h.gate.apply(rule({ fc_max_outstanding: 8 }));
    expect([h.pool.effective, h.pool.inflight]).toEqual([8, 12]);
    expect(h.admit().kind).toBe('queued');
  });

  it('has nothing to adapt without a service ceiling', () => {
    const h = adaptive({ fc_max_outstanding: 0 });
    second(h, 9);
    expect([h.pool.effective, h.pool.adaptState]).toEqual([0, 'off']);
  });
});
