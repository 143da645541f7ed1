import { describe, expect, it } from 'vitest';
import { deriveEnvelope, type EnvelopeInputs } from './envelope.js';
import { testPolicy } from './test/policy.js';

const policy = testPolicy();
const NOW = 1_000_000;
const cost = { promptTokens: 10, maxOutputTokens: 10 };

function derive(inputs: Partial<EnvelopeInputs>, headers: Record<string, string> = {}) {
  return deriveEnvelope(
    policy,
    { path: '/v1/chat/completions', cost, header: (n) => headers[n], ...inputs },
    NOW,
  );
}

describe('admission envelope', () => {
  it('takes the class from the credential claim first, then the longest route prefix, then the default', () => {
    expect(derive({ claims: { cls: 'mid', sub: 'acme' } })).toMatchObject({
      ok: true,
      envelope: { className: 'mid', tenant: 'acme', deadlineMs: NOW + 10_000 },
      sources: { className: 'claim', tenant: 'claim', deadline: 'default' },
    });
    expect(derive({ path: '/v1/batch/jobs' })).toMatchObject({
      envelope: { className: 'lo', tenant: 'anonymous' },
    });
    expect(derive({})).toMatchObject({ envelope: { className: 'hi' }, sources: { className: 'default' } });
  });

  it('matches a route prefix on a path segment boundary only', () => {
    expect(derive({ path: '/v1/batch' })).toMatchObject({ envelope: { className: 'lo' } });
    expect(derive({ path: '/v1/batches' })).toMatchObject({ envelope: { className: 'hi' } });
  });

  it('lets a client header lower the priority but never raise it', () => {
    expect(derive({}, { 'x-class': 'lo' })).toMatchObject({
      envelope: { className: 'lo' },
      sources: { className: 'header' },
    });
    expect(derive({ path: '/v1/batch' }, { 'x-class': 'hi' })).toMatchObject({
      envelope: { className: 'lo' },
      sources: { className: 'route', ignored: ['x-class: hi (higher priority)'] },
    });
  });

  it('lets a client header shorten the deadline but never lengthen it, and not where the class forbids it', () => {
    expect(derive({}, { 'x-deadline-ms': '500' })).toMatchObject({
      envelope: { deadlineMs: NOW + 500 },
      sources: { deadline: 'header' },
    });
    expect(derive({}, { 'x-deadline-ms': '9000' })).toMatchObject({
      envelope: { deadlineMs: NOW + 2000 },
      sources: { deadline: 'default', ignored: ['x-deadline-ms: 9000 (longer than 2000)'] },
    });
    expect(derive({ path: '/v1/batch' }, { 'x-deadline-ms': '10' })).toMatchObject({
      envelope: { deadlineMs: NOW + 60_000 },
    });
  });

  it('refuses bad inputs naming the field: unknown class claim or header, bad deadline, bad cost, bad key', () => {
    expect(derive({ claims: { cls: 'vip' } })).toEqual({
      ok: false,
      problem: { field: 'claim cls', detail: '"vip" is not a class of the policy' },
    });
    expect(derive({}, { 'x-class': 'vip' })).toMatchObject({ problem: { field: 'header x-class' } });
    expect(derive({}, { 'x-deadline-ms': '-5' })).toEqual({
      ok: false,
      problem: { field: 'header x-deadline-ms', detail: '"-5" is not a whole number of milliseconds' },
    });
    expect(derive({ cost: { promptTokens: -1, maxOutputTokens: 1 } })).toEqual({
      ok: false,
      problem: {
        field: 'cost.promptTokens',
        detail: 'cost.promptTokens: -1 is not a whole number of at least 0',
      },
    });
    expect(derive({}, { 'idempotency-key': 'k'.repeat(257) })).toMatchObject({
      problem: { field: 'header idempotency-key' },
    });
  });

  it('carries the idempotency key from the policy header', () => {
    expect(derive({}, { 'idempotency-key': 'intent-1' })).toMatchObject({
      envelope: { idempotencyKey: 'intent-1' },
    });
  });

  it('grants the emergency lane only to an eligible credential, and marks reserve traffic only on the host', () => {
    expect(derive({ claims: { sub: 'ops' }, emergency: true })).toMatchObject({
      envelope: { lane: 'emergency', eligibleBy: 'tenant list' },
      sources: { emergency: 'granted' },
    });
    const refused = derive({ claims: { sub: 'acme' }, emergency: true });
    expect(refused).toMatchObject({ sources: { emergency: 'not_eligible' } });
    expect(refused.ok && refused.envelope.lane).toBeUndefined();
    expect(derive({ reserve: true })).toMatchObject({ envelope: { lane: 'reserve' } });
  });
});
