import { describe, expect, it } from 'vitest';
import { parseFcFields, readEnv, resolveConfig } from './config.js';
import { GateError } from './errors.js';

const parse = (fc: Record<string, unknown>) => parseFcFields(fc).declared;
const err = (fn: () => unknown): GateError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof GateError) return e;
    throw e;
  }
  throw new Error('expected a GateError');
};

describe('rule configuration', () => {
  it('resolves each value from the rule, else the env, else the default, naming the source', () => {
    const { env } = readEnv({ LLB_FC_MODE: 'observe', LLB_FC_EP_MAX_INFLIGHT: '8' });
    const c = resolveConfig(parse({ fc_max_outstanding: 16 }), env);
    expect(c.mode).toBe('observe');
    expect(c.maxOutstanding).toBe(16);
    expect(c.epMaxInflight).toBe(8);
    expect(c.queueDepth).toBe(0);
    expect(c.telemetryStaleMs).toBe(30000);
    expect(c.source.fc_mode).toBe('env');
    expect(c.source.fc_max_outstanding).toBe('rule');
    expect(c.source.fc_ep_max_inflight).toBe('env');
    expect(c.source.fc_max_queue_depth).toBe('default');
  });

  it('treats 0 and inherit as declaring nothing, so a rule cannot ask for unlimited under an env ceiling', () => {
    const { env } = readEnv({ LLB_FC_MAX_OUTSTANDING: '12', LLB_FC_MODE: 'enforce' });
    const c = resolveConfig(parse({ fc_max_outstanding: 0, fc_mode: 'inherit' }), env);
    expect(c.maxOutstanding).toBe(12);
    expect(c.source.fc_max_outstanding).toBe('env');
    expect(c.mode).toBe('enforce');
  });

  it('lets a rule switch the gate off under an enforcing environment', () => {
    const { env } = readEnv({ LLB_FC_MODE: 'enforce' });
    expect(resolveConfig(parse({ fc_mode: 'off' }), env).mode).toBe('off');
  });

  it('gives a depth with no wait window anywhere 5000 ms', () => {
    const c = resolveConfig(parse({ fc_max_queue_depth: 32 }), {});
    expect(c.queueWaitMs).toBe(5000);
    expect(c.source.fc_max_queue_wait_ms).toBe('default');
    const withEnv = resolveConfig(
      parse({ fc_max_queue_depth: 32 }),
      readEnv({ LLB_FC_MAX_QUEUE_WAIT_MS: '700' }).env,
    );
    expect(withEnv.queueWaitMs).toBe(700);
  });

  it('falls back from LLB_FC_PREFILL_MAX_INFLIGHT to LLB_PD_MAX_INFLIGHT_PER_EP', () => {
    expect(resolveConfig({}, readEnv({ LLB_PD_MAX_INFLIGHT_PER_EP: '3' }).env).prefillMaxInflight).toBe(3);
    const both = readEnv({ LLB_PD_MAX_INFLIGHT_PER_EP: '3', LLB_FC_PREFILL_MAX_INFLIGHT: '5' }).env;
    expect(resolveConfig({}, both).prefillMaxInflight).toBe(5);
  });

  it('reads a share of 100 as no share, also overriding an env share', () => {
    const { env } = readEnv({ LLB_FC_TENANT_MAX_SHARE_PCT: '25' });
    expect(resolveConfig({}, env).tenantMaxSharePct).toBe(25);
    expect(resolveConfig(parse({ fc_tenant_max_share_pct: 100 }), env).tenantMaxSharePct).toBe(0);
  });

  it('refuses a ceiling above 100000 naming the field, the value and the bound', () => {
    const e = err(() => parse({ fc_max_outstanding: 100001 }));
    expect(e.code).toBe('SLUICE_E_FIELD_BOUND');
    expect(e.message).toBe('serviceArguments.fc_max_outstanding: 100001 is above the maximum 100000');
    expect(e.field).toBe('serviceArguments.fc_max_outstanding');
    expect(e.value).toBe(100001);
  });

  it('refuses a depth above 65536, a wait above 3600000 and a share above 100', () => {
    expect(err(() => parse({ fc_max_queue_depth: 70000 })).message).toBe(
      'serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536',
    );
    expect(err(() => parse({ fc_max_queue_wait_ms: 3600001 })).code).toBe('SLUICE_E_FIELD_BOUND');
    expect(err(() => parse({ fc_tenant_max_share_pct: 101 })).code).toBe('SLUICE_E_FIELD_BOUND');
    expect(err(() => parse({ fc_warmup_ms: -1 })).message).toBe(
      'serviceArguments.fc_warmup_ms: -1 is below the minimum 0',
    );
  });

  it('refuses JSON null, wrong types and unknown values with a stable code each', () => {
    expect(err(() => parse({ fc_max_outstanding: null })).code).toBe('SLUICE_E_FIELD_NULL');
    expect(err(() => parse({ fc_max_outstanding: '16' })).code).toBe('SLUICE_E_FIELD_TYPE');
    expect(err(() => parse({ fc_max_outstanding: 1.5 })).code).toBe('SLUICE_E_FIELD_TYPE');
    const v = err(() => parse({ fc_mode: 'enforcing' }));
    expect(v.code).toBe('SLUICE_E_FIELD_VALUE');
    expect(v.message).toBe(
      'serviceArguments.fc_mode: "enforcing" is not one of off, observe, enforce, inherit',
    );
  });

  it('refuses an unknown fc_ field and suggests the nearest name', () => {
    const e = err(() => parse({ fc_max_outstandng: 3 }));
    expect(e.code).toBe('SLUICE_E_FIELD_UNKNOWN');
    expect(e.message).toBe(
      'serviceArguments.fc_max_outstandng: unknown field (did you mean fc_max_outstanding?)',
    );
  });

  it('ignores fc_effective on input', () => {
    expect(parse({ fc_effective: { mode: 'enforce' }, fc_max_outstanding: 4 })).toEqual({
      fc_max_outstanding: 4,
    });
  });

  it('reads the environment leniently: an unknown mode is off, a bad number unset, a share over 100 no share', () => {
    const { env, warnings } = readEnv({
      LLB_FC_MODE: 'sometimes',
      LLB_FC_MAX_OUTSTANDING: 'lots',
      LLB_FC_TENANT_MAX_SHARE_PCT: '150',
      LLB_FC_ADAPTIVE: 'on',
    });
    expect(env).toEqual({ fc_mode: 'off', fc_adaptive: true });
    expect(warnings.map((w) => w.variable)).toEqual([
      'LLB_FC_MODE',
      'LLB_FC_MAX_OUTSTANDING',
      'LLB_FC_TENANT_MAX_SHARE_PCT',
    ]);
  });
});
