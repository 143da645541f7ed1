import { describe, expect, it } from 'vitest';
import { EP1, Harness, KEY, rule } from '../test/gate-harness.js';
import { GateError } from './errors.js';

const ENFORCE = {
  fc_mode: 'enforce',
  fc_max_outstanding: 2,
  fc_max_queue_depth: 8,
  fc_max_queue_wait_ms: 5000,
};

function stored(h: Harness): Record<string, unknown> {
  return h.gate.rules()[0]!.serviceArguments;
}

describe('runtime replace', () => {
  it('keeps omitted fields and applies a change of admission fields in place', () => {
    const h = new Harness();
    expect(h.gate.apply(rule(ENFORCE)).outcome).toBe('created');
    const pool = h.pool;
    const r = h.gate.apply(rule({ fc_max_outstanding: 4 }));
    expect(r.outcome).toBe('updated_in_place');
    expect(h.pool).toBe(pool);
    expect(stored(h)).toMatchObject({ fc_mode: 'enforce', fc_max_outstanding: 4, fc_max_queue_depth: 8 });
    expect(h.pool.cfg.queueWaitMs).toBe(5000);
  });

  it('returns a field to the env or default on an explicit 0 or inherit', () => {
    const h = new Harness({ env: { LLB_FC_MAX_OUTSTANDING: '10' } });
    h.gate.apply(rule(ENFORCE));
    h.gate.apply(rule({ fc_max_outstanding: 0, fc_mode: 'inherit' }));
    expect(h.pool.cfg.maxOutstanding).toBe(10);
    expect(h.pool.cfg.source.fc_max_outstanding).toBe('env');
    expect(h.pool.cfg.mode).toBe('off');
    expect(stored(h).fc_max_outstanding).toBeUndefined();
  });

  it('refuses JSON null and leaves the stored rule unchanged', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    const before = JSON.stringify(h.gate.rules());
    expect(() => h.gate.apply(rule({ fc_max_outstanding: null }))).toThrow(GateError);
    expect(JSON.stringify(h.gate.rules())).toBe(before);
  });

  it('accepts a replace carrying only a new depth, keeping the stored wait', () => {
    const h = new Harness();
    h.gate.apply(rule({ ...ENFORCE, fc_max_queue_wait_ms: 700 }));
    h.gate.apply(rule({ fc_max_queue_depth: 64 }));
    expect(h.pool.cfg.queueDepth).toBe(64);
    expect(h.pool.cfg.queueWaitMs).toBe(700);
  });

  it('refuses a replace carrying only fc_max_queue_wait_ms 0 on a rule with a depth, leaving it unchanged', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    const before = JSON.stringify(h.gate.rules());
    let code = '';
    try {
      h.gate.apply(rule({ fc_max_queue_wait_ms: 0 }));
    } catch (e) {
      code = (e as GateError).code;
      expect((e as GateError).message).toBe(
        'serviceArguments.fc_max_queue_wait_ms: 0 is refused while fc_max_queue_depth is 8: a depth needs a wait window greater than 0',
      );
    }
    expect(code).toBe('SLUICE_E_DEPTH_WITHOUT_WAIT');
    expect(JSON.stringify(h.gate.rules())).toBe(before);
  });

  it('refuses a new rule that declares a depth with an explicit wait of 0', () => {
    const h = new Harness();
    expect(() => h.gate.apply(rule({ fc_max_queue_depth: 4, fc_max_queue_wait_ms: 0 }))).toThrow(
      /a depth needs a wait window/,
    );
    expect(h.gate.rules()).toEqual([]);
  });

  it('wakes waiters oldest first, one per new unit, when the ceiling is raised', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    h.permit();
    h.permit();
    const waiters = [h.ticket({}, 'a'), h.ticket({}, 'b'), h.ticket({}, 'c')];
    h.gate.apply(rule({ fc_max_outstanding: 4 }));
    expect(h.grants.map((g) => g.ticket)).toEqual([waiters[0], waiters[1]]);
    expect(h.pool.queue.length).toBe(1);
    expect(h.pool.inflight).toBe(4);
  });

  it('wakes every waiter at once when the pool stops enforcing', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    h.permit();
    h.permit();
    h.ticket({}, 'a');
    h.ticket({}, 'b');
    h.gate.apply(rule({ fc_mode: 'observe' }));
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['a', 'b']);
    expect(h.pool.queue.length).toBe(0);
    expect(h.pool.inflight).toBe(4);
  });

  it('re-creates the entry on a change outside the gate fields: waiters end admission_drained and counts restart', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    const old = h.pool;
    const running = h.permit();
    h.permit();
    h.ticket({}, 'w');
    const r = h.gate.apply(rule(ENFORCE, [{ endpointIP: '198.51.100.11', targetPort: 8000, weight: 2 }]));
    expect(r.outcome).toBe('recreated');
    expect(h.pool).not.toBe(old);
    expect(h.endings.map((e) => [e.ticket.context, e.refusal.status, e.refusal.error])).toEqual([
      ['w', 503, 'admission_drained'],
    ]);
    expect(h.pool.inflight).toBe(0);
    expect(h.count('admitted')).toBe(0);
    running.release();
    expect(h.pool.inflight).toBe(0);
    expect(h.gate.anomalies.underflow).toBe(0);
  });

  it('reads back fc_effective with every field and its source', () => {
    const h = new Harness({ env: { LLB_FC_TELEMETRY_STALE_MS: '20000' } });
    h.gate.apply(rule({ ...ENFORCE, fc_adaptive: 'on', fc_tenant_max_share_pct: 50 }));
    h.permit({ tenant: 't1' });
    const eff = stored(h).fc_effective;
    expect(eff).toEqual({
      mode: 'enforce',
      max_outstanding: 2,
      ep_max_inflight: 0,
      prefill_max_inflight: 0,
      decode_max_inflight: 0,
      queue_depth: 8,
      queue_wait_ms: 5000,
      inflight: 1,
      queued: 0,
      queue_memory_bound_mib: 8,
      telemetry_stale_ms: 20000,
      adaptive: 'on',
      ttft_target_ms: 0,
      effective_max_outstanding: 2,
      adapt_state: 'open',
      adapt_reason: 'none',
      warmup_ms: 0,
      warming_endpoints: 0,
      tenant_max_share_pct: 50,
      tenants_active: 1,
      expose_headers: 'off',
      source: {
        mode: 'rule',
        max_outstanding: 'rule',
        ep_max_inflight: 'default',
        prefill_max_inflight: 'default',
        decode_max_inflight: 'default',
        queue_depth: 'rule',
        queue_wait_ms: 'rule',
        adaptive: 'rule',
        ttft_target_ms: 'default',
        telemetry_stale_ms: 'env',
        warmup_ms: 'default',
        tenant_max_share_pct: 'rule',
        expose_headers: 'default',
      },
    });
  });

  it('warns once at apply when the queue memory bound exceeds half of the node memory', () => {
    const h = new Harness({ nodeMemoryMib: 100 });
    expect(h.gate.apply(rule({ fc_max_queue_depth: 50 })).warnings).toEqual([]);
    const r = h.gate.apply(rule({ fc_max_queue_depth: 51 }));
    expect(r.warnings).toEqual([
      `WARNING ${KEY}: fc_max_queue_depth 51 may park about 51 MiB, over half of the node's 100 MiB`,
    ]);
  });

  it('does not gate a rule that is not an AI-gateway service', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE, undefined, { sse_mode: false }));
    expect(h.gate.pool(KEY)).toBeUndefined();
    expect(h.gate.admit(KEY, {})).toEqual({ kind: 'bypass', endpoint: null, counted: false });
    expect(h.gate.rules()[0]!.serviceArguments.fc_effective).toBeUndefined();
  });

  const KEY_ONLY = { sse_mode: false, api_key_auth: 'required' };

  it('refuses fc_expose_headers on with a response-direction sockMapMode', () => {
    const h = new Harness();
    expect(() =>
      h.gate.apply(rule({ fc_expose_headers: 'on' }, undefined, { ...KEY_ONLY, sockMapMode: 'both' })),
    ).toThrow(expect.objectContaining({ code: 'SLUICE_E_EXPOSE_SOCKMAP' }));
  });

  it('judges fc_expose_headers on the merged rule: a replace turning it on under sockMapMode response is refused and changes nothing', () => {
    const h = new Harness();
    const extra = { ...KEY_ONLY, sockMapMode: 'response' };
    h.gate.apply(rule({ fc_mode: 'enforce', fc_max_outstanding: 4 }, undefined, extra)); // allowed: no headers asked
    const before = JSON.stringify(h.gate.rules());
    expect(() => h.gate.apply(rule({ fc_expose_headers: 'on' }, undefined, extra))).toThrow(
      expect.objectContaining({
        code: 'SLUICE_E_EXPOSE_SOCKMAP',
        field: 'serviceArguments.fc_expose_headers',
      }),
    );
    expect(JSON.stringify(h.gate.rules())).toBe(before);
    // The same when the replace changes sockMapMode under a stored fc_expose_headers on.
    const g = new Harness();
    g.gate.apply(rule({ fc_expose_headers: 'on' }, undefined, { ...KEY_ONLY, sockMapMode: 'request' }));
    expect(() => g.gate.apply(rule({}, undefined, { ...KEY_ONLY, sockMapMode: 'both' }))).toThrow(
      expect.objectContaining({ code: 'SLUICE_E_EXPOSE_SOCKMAP' }),
    );
  });

  it.each([
    ['sse_mode', { sse_mode: true }],
    ['pd_disagg_mode', { sse_mode: false, pd_disagg_mode: true }],
  ])('refuses every sockMapMode but none on a service with %s', (_f, ai) => {
    for (const mode of ['request', 'response', 'both']) {
      const h = new Harness();
      expect(() => h.gate.apply(rule({}, undefined, { ...ai, sockMapMode: mode }))).toThrow(
        expect.objectContaining({
          code: 'SLUICE_E_SOCKMAP_AI',
          field: 'serviceArguments.sockMapMode',
          value: mode,
        }),
      );
    }
    const ok = new Harness();
    expect(ok.gate.apply(rule({}, undefined, { ...ai, sockMapMode: 'none' })).outcome).toBe('created');
  });

  it('names in a warning each loxilb data-plane field it stores but does not model, and warns of nothing else', () => {
    const h = new Harness();
    const r = h.gate.apply(
      rule({ fc_mode: 'enforce' }, undefined, { connectionLimit: 100, snat: true, name: 'llm' }),
    );
    expect(r.warnings).toEqual([
      `WARNING ${KEY}: serviceArguments.snat is stored and read back, but Sluice does not model it (a loxilb data-plane setting)`,
      `WARNING ${KEY}: serviceArguments.connectionLimit is stored and read back, but Sluice does not model it (a loxilb data-plane setting)`,
    ]);
    expect(h.gate.rules()[0]!.serviceArguments.connectionLimit).toBe(100);
    expect(new Harness().gate.apply(rule({ fc_mode: 'enforce' })).warnings).toEqual([]);
  });

  it('refuses unknown serviceArguments and endpoint fields naming them', () => {
    const h = new Harness();
    expect(() => h.gate.apply(rule({}, undefined, { colour: 'red' }))).toThrow(
      expect.objectContaining({ code: 'SLUICE_E_FIELD_UNKNOWN', field: 'serviceArguments.colour' }),
    );
    expect(() => h.gate.apply(rule({}, [{ endpointIP: '198.51.100.11', targetPort: 70000 }]))).toThrow(
      'endpoints[0].targetPort: 70000 is above the maximum 65535',
    );
  });

  it('deletes a rule, draining its waiters', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    h.permit();
    h.permit();
    h.ticket({}, 'w');
    h.gate.delete(KEY);
    expect(h.endings.map((e) => e.refusal.error)).toEqual(['admission_drained']);
    expect(h.gate.rules()).toEqual([]);
    expect(() => h.gate.delete(KEY)).toThrow(expect.objectContaining({ code: 'SLUICE_E_RULE_NOT_FOUND' }));
  });

  it('starts the warm-up of an endpoint that a replace adds', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ ...ENFORCE, fc_ep_max_inflight: 8, fc_warmup_ms: 10000 }, [
        { endpointIP: '198.51.100.11', targetPort: 8000 },
      ]),
    );
    h.clock.advance(1000);
    h.gate.apply(rule({ ...ENFORCE, fc_ep_max_inflight: 8, fc_warmup_ms: 10000 }));
    expect(h.pool.warmingEndpoints()).toBe(1);
    expect(h.pool.capOf(h.pool.endpoints.find((e) => e.id === EP1)!)).toBe(8);
  });
});

describe('review follow-ups', () => {
  it('refuses unknown keys inside an api_key_auth object', () => {
    const h = new Harness();
    expect(() =>
      h.gate.apply(rule({}, undefined, { api_key_auth: { mode: 'required', colour: 'red' } })),
    ).toThrow(
      expect.objectContaining({
        code: 'SLUICE_E_FIELD_UNKNOWN',
        field: 'serviceArguments.api_key_auth.colour',
      }),
    );
    expect(() =>
      h.gate.apply(rule({}, undefined, { api_key_auth: { mode: 'jwt', tenant_claim: 'org' } })),
    ).not.toThrow();
  });

  it('cancels a waiter on its own pool even after the rule was re-created', () => {
    const h = new Harness();
    h.gate.apply(rule(ENFORCE));
    h.permit();
    h.permit();
    const t = h.ticket({}, 'w');
    h.gate.apply(rule(ENFORCE, [{ endpointIP: '198.51.100.11', targetPort: 8000, weight: 3 }]));
    h.permit();
    h.permit();
    h.ticket({}, 'new');
    h.gate.cancel(KEY, t);
    expect(h.pool.queue.length).toBe(1);
    expect(h.count('cancelled')).toBe(0);
  });

  it('lists the telemetry targets of each gated pool', () => {
    const h = new Harness();
    h.gate.apply(rule({ ...ENFORCE, fc_adaptive: 'on', fc_telemetry_stale_ms: 20000 }));
    expect(h.gate.telemetryTargets()).toEqual([
      {
        key: KEY,
        service: '192.0.2.10:8080',
        adaptive: true,
        staleMs: 20000,
        endpoints: [
          { id: EP1, role: 'normal', healthy: true },
          { id: '198.51.100.12:8000', role: 'normal', healthy: true },
        ],
      },
    ]);
  });
});
