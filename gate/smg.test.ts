import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { GateError } from './errors.js';
import { renderPrometheus } from './metrics.js';
import type { Permit } from './permit.js';
import type { Ticket } from './pool.js';
import { parseSmgSettings, SmgGate, type SmgSettings, smgResponse } from './smg.js';

function smg(settings: SmgSettings) {
  const clock = new ManualClock();
  const grants: { ticket: Ticket; permit: Permit }[] = [];
  const ended: string[] = [];
  const gate = new SmgGate(settings, {
    clock,
    host: {
      granted: (ticket, permit) => {
        grants.push({ ticket, permit });
        return 'taken';
      },
      ended: (ticket, r) => ended.push(`${ticket.context}:${smgResponse(r).status}`),
    },
  });
  const permit = (ctx?: unknown): Permit => {
    const d = gate.admit({ protocol: 'h2' }, ctx);
    if (d.kind !== 'admit') throw new Error(`expected admit, got ${d.kind}`);
    return d.permit;
  };
  return { clock, gate, grants, ended, permit };
}

describe('the SMG dialect', () => {
  it('uses SMG defaults: disabled, queue 100, timeout 60 s, no refill', () => {
    expect(parseSmgSettings({})).toEqual({
      maxConcurrentRequests: -1,
      queueSize: 100,
      queueTimeoutSecs: 60,
      rateLimitTokensPerSecond: 0,
      enabled: false,
    });
  });

  it('turns admission control off for any cap <= 0', () => {
    const s = smg({ max_concurrent_requests: 0 });
    for (let i = 0; i < 5; i++) expect(s.gate.admit({}).kind).toBe('bypass');
  });

  it('accepts any i32 cap below 0 as "off", not only -1', () => {
    for (const cap of [-2, -100, -2_147_483_648]) {
      expect(parseSmgSettings({ max_concurrent_requests: cap })).toMatchObject({ enabled: false });
      expect(smg({ max_concurrent_requests: cap }).gate.admit({}).kind).toBe('bypass');
    }
    expect(() => parseSmgSettings({ max_concurrent_requests: -2_147_483_649 })).toThrow(GateError);
  });

  it('refuses a queue without a timeout and names the setting', () => {
    expect(() => parseSmgSettings({ queue_size: 4, queue_timeout_secs: 0 })).toThrow(
      'smg.queue_timeout_secs: 0 must be above 0 while queue_size is 4',
    );
    expect(() => parseSmgSettings({ queue_sise: 4 })).toThrow(GateError);
  });

  it('lets every request wait, HTTP/2 included, FIFO, and admits exactly queue_size waiters before shedding 429', () => {
    const s = smg({ max_concurrent_requests: 1, queue_size: 2 });
    const first = s.permit();
    expect(s.gate.admit({ protocol: 'h2' }, 'a').kind).toBe('queued');
    expect(s.gate.admit({ protocol: 'http1' }, 'b').kind).toBe('queued');
    const d = s.gate.admit({}, 'c');
    expect(d.kind).toBe('refuse');
    if (d.kind === 'refuse') {
      expect(smgResponse(d.refusal)).toEqual({
        status: 429,
        code: 'admission_queue_full',
        headers: { 'X-SMG-Error-Code': 'admission_queue_full', 'Retry-After': '2' },
        body: {
          error: {
            type: 'Too Many Requests',
            code: 'admission_queue_full',
            message: 'admission queue is full',
            param: null,
          },
        },
      });
    }
    first.release();
    expect(s.grants.map((g) => g.ticket.context)).toEqual(['a']);
  });

  it('sheds a waiter 503 admission_queue_timeout exactly queue_timeout_secs after its entry', () => {
    const s = smg({ max_concurrent_requests: 1, queue_size: 4, queue_timeout_secs: 2 });
    s.permit();
    s.clock.advance(450);
    s.gate.admit({}, 'w');
    s.clock.advance(1999); // t=2449: deadline 2450 not reached
    expect(s.ended).toEqual([]);
    s.clock.advance(1); // t=2450, between two 100 ms sweeps
    expect(s.ended).toEqual(['w:503']);
  });

  it('sheds at once with queue_size 0 and counts it only as a rejected decision', () => {
    const s = smg({ max_concurrent_requests: 1, queue_size: 0 });
    s.permit();
    const d = s.gate.admit({});
    expect(d.kind === 'refuse' && smgResponse(d.refusal).code).toBe('admission_queue_full');
    const text = renderPrometheus(s.gate.collect());
    expect(text).toContain('smg_admission_queue_rejected_total{reason="full"} 0');
    expect(text).toContain('smg_http_rate_limit_total{result="rejected"} 1');
    expect(text).toContain('smg_http_rate_limit_total{result="allowed"} 1');
    expect(text).toContain('smg_admission_inflight 1');
  });

  it('with a refill rate hands refilled tokens to the oldest waiter and lets in-flight pass the cap', () => {
    const s = smg({ max_concurrent_requests: 2, queue_size: 10, rate_limit_tokens_per_second: 10 });
    s.permit();
    s.permit();
    s.gate.admit({}, 'w1');
    s.gate.admit({}, 'w2');
    s.clock.advance(100); // one token refilled
    expect(s.grants.map((g) => g.ticket.context)).toEqual(['w1']);
    s.clock.advance(100);
    expect(s.grants.map((g) => g.ticket.context)).toEqual(['w1', 'w2']);
    expect(s.gate.pool.inflight).toBe(4);
  });

  it('without refill keeps in-flight at the cap', () => {
    const s = smg({ max_concurrent_requests: 2, queue_size: 10 });
    s.permit();
    s.permit();
    s.gate.admit({}, 'w');
    s.clock.advance(5000);
    expect(s.grants).toHaveLength(0);
    expect(s.gate.pool.inflight).toBe(2);
  });

  it('returns a cancelled waiter its queue slot', () => {
    const s = smg({ max_concurrent_requests: 1, queue_size: 1 });
    s.permit();
    const d = s.gate.admit({}, 'x');
    if (d.kind !== 'queued') throw new Error('expected queued');
    s.gate.cancel(d.ticket);
    expect(s.gate.admit({}, 'y').kind).toBe('queued');
  });
});
