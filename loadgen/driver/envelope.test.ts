/**
 * The envelope on the wire (envelope.ts) against the simulator's `envelopeOf`: for the same
 * descriptor at the same time, the claims of the token, the headers and the path the driver sends,
 * read the way the proxy reads them (the verified claims with the tenant claim, the request path,
 * its headers; proxy/policy/proxy-policy.ts), give the envelope the simulator derives: class,
 * tenant, deadline and idempotency key. And without a policy the requests are the ones built
 * before, header for header (against a loopback backend).
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { deriveEnvelope, ManualClock, parsePolicy } from '../../gate/index.js';
import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import type { EnvelopeConfig } from '../../sim/clients/tenants.js';
import { SimPolicy } from '../../sim/run/policy-admission.js';
import type { Attempt } from '../../sim/run/requests.js';
import { buildRequest } from '../shared/payload.js';
import { runLoad } from './driver.js';
import { envelopeRules, type LoadEnvelope, TokenCache, withEnvelope } from './envelope.js';
import { type Backend, startBackend } from './test/backend.js';
import { setupOf } from './test/helpers.js';

/** A policy with non-default claim and header names, a route and a class whose deadline a client may shorten. */
const POLICY = `version: 1
capacity_seats: 8
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 2 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 4
    queue: { max_count: 4, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 8000, client_may_shorten: true }
  batch:
    priority: 10
    guaranteed_seats: 4
    queue: { max_count: 4, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 600000, client_may_shorten: true }
envelope:
  class_claim: tier
  tenant_claim: team
  routes:
    - { path_prefix: /v1/batches, class: batch }
  default_class: interactive
  client_header: { deadline_ms: x-left-ms }
retry: { idempotency_header: x-intent, budget_per_intent: 3 }
`;

const SECRET = Buffer.from('test-secret-0123456789');

function descriptor(o: {
  tenant?: string;
  envelope?: EnvelopeConfig;
  logicalId?: number;
  firstSentAtMs?: number;
}): RequestDescriptor {
  return {
    id: 1,
    logicalId: o.logicalId ?? 1,
    attempt: 1,
    tenant: o.tenant,
    promptTokens: 100,
    outputTokens: 20,
    stream: true,
    protocol: 'http1',
    pd: false,
    inference: true,
    sentAtMs: o.firstSentAtMs ?? 0,
    firstSentAtMs: o.firstSentAtMs ?? 0,
    deadlineMs: undefined,
    ttftSloMs: undefined,
    ...(o.envelope === undefined ? {} : { envelope: o.envelope }),
  };
}

/** The payload of a token whose HS256 signature checks with SECRET. */
function verifiedClaims(token: string): Record<string, unknown> {
  const [h, p, s] = token.split('.');
  const want = createHmac('sha256', SECRET).update(`${h}.${p}`).digest('base64url');
  expect(s).toBe(want);
  return JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('the envelope on the wire', () => {
  const policy = parsePolicy(POLICY, 'policy.yaml');
  const sim = new SimPolicy(
    { file: 'policy.yaml', text: POLICY, classes: ['interactive', 'batch'] },
    new ManualClock(0),
  );
  const rules = envelopeRules(policy);

  it('reads the claim and header names of the policy', () => {
    expect(rules).toEqual({
      tenantClaim: 'team',
      classClaim: 'tier',
      deadlineHeader: 'x-left-ms',
      idempotencyHeader: 'x-intent',
    });
  });

  it.each([
    [
      'a class claim and a deadline, 1.5 s after the first send',
      { tenant: 'a', envelope: { className: 'batch', deadlineMs: 5000 } },
      3500,
    ],
    [
      'the deadline already past',
      { tenant: 'a', envelope: { className: 'interactive', deadlineMs: 1000 } },
      2500,
    ],
    ['no class: the default', { tenant: 'b', envelope: { deadlineMs: 2000 } }, 1000],
    ['a route', { tenant: 'b', envelope: { route: '/v1/batches' } }, 1000],
    ['idempotency none', { tenant: 'c', envelope: { className: 'batch', idempotency: 'none' } }, 1000],
    ['no envelope inputs', { tenant: 'c', logicalId: 42 }, 1000],
  ] as const)('gives the envelope envelopeOf derives: %s', (_name, o, nowMs) => {
    const d = descriptor({ ...o, firstSentAtMs: 1000, logicalId: 'logicalId' in o ? o.logicalId : 7 });
    const want = sim.envelopeOf({ d } as unknown as Attempt, nowMs);
    const env: LoadEnvelope = { rules, tokens: new TokenCache(rules, SECRET, 1_700_000_000, 600) };
    const spec = withEnvelope(buildRequest(d, {}), d, nowMs, env);
    const auth = /^Bearer (\S+)$/.exec(spec.headers.authorization ?? '');
    expect(auth).not.toBeNull();
    const claims = verifiedClaims(auth![1]!);
    expect(claims.exp).toBe(1_700_000_600);
    // The proxy's view: the verified claims (its --jwt-tenant-claim is the policy's, `team`, so
    // the tenant it verifies is the claim's own value).
    const got = deriveEnvelope(
      policy,
      {
        claims,
        path: spec.path,
        header: (name) => spec.headers[name],
        cost: { promptTokens: d.promptTokens, maxOutputTokens: d.outputTokens },
      },
      nowMs,
    );
    if (!got.ok) throw new Error(got.problem.detail);
    expect({
      className: got.envelope.className,
      tenant: got.envelope.tenant,
      deadlineMs: got.envelope.deadlineMs,
      idempotencyKey: got.envelope.idempotencyKey,
    }).toEqual({
      className: want.className,
      tenant: want.tenant,
      deadlineMs: want.deadlineMs,
      idempotencyKey: want.idempotencyKey,
    });
  });

  it('pins the derived values of one request', () => {
    const d = descriptor({
      tenant: 'a',
      envelope: { className: 'batch', deadlineMs: 5000 },
      firstSentAtMs: 1000,
      logicalId: 9,
    });
    const env: LoadEnvelope = { rules, tokens: new TokenCache(rules, SECRET, 1_700_000_000.7, 60) };
    const spec = withEnvelope(buildRequest(d, {}), d, 2500.4, env);
    expect(spec.headers['x-left-ms']).toBe('3499');
    expect(spec.headers['x-intent']).toBe('intent-9');
    expect(spec.path).toBe('/v1/chat/completions');
    expect(verifiedClaims(spec.headers.authorization!.slice(7))).toEqual({
      team: 'a',
      tier: 'batch',
      iat: 1_700_000_000,
      exp: 1_700_000_060,
    });
  });

  it('signs one token per tenant and class, and none for keyless traffic', () => {
    const tokens = new TokenCache(rules, SECRET, 1_700_000_000, 60);
    const env: LoadEnvelope = { rules, tokens };
    const send = (tenant: string | undefined, className?: string) => {
      const d = descriptor({
        ...(tenant === undefined ? {} : { tenant }),
        ...(className === undefined ? {} : { envelope: { className } }),
      });
      return withEnvelope(buildRequest(d, {}), d, 0, env).headers.authorization;
    };
    const a1 = send('a', 'batch');
    expect(send('a', 'batch')).toBe(a1);
    expect(send('a', 'interactive')).not.toBe(a1);
    expect(send('b', 'batch')).not.toBe(a1);
    send('a');
    expect(tokens.size).toBe(4);
    expect(send(undefined, 'batch')).toBeUndefined();
    expect(tokens.size).toBe(4);
  });

  it('sends the credential but no envelope headers or route on a non-inference request', () => {
    const d = {
      ...descriptor({ tenant: 'a', envelope: { route: '/v1/batches', deadlineMs: 100 } }),
      inference: false,
    };
    const env: LoadEnvelope = { rules, tokens: new TokenCache(rules, SECRET, 0, 60) };
    const spec = withEnvelope(buildRequest(d, {}), d, 0, env);
    expect(spec.path).toBe('/v1/models');
    expect(Object.keys(spec.headers).sort()).toEqual(['authorization', 'x-request-id']);
  });
});

describe('without a policy', () => {
  let backend: Backend | undefined;
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });

  const setup = setupOf({
    tenants: [
      { id: 'a', envelope: { className: 'batch', deadlineMs: 5000, route: '/v1/batches' } },
      { id: 'b', envelope: { className: 'interactive' } },
    ],
    apiKeys: { a: 'sk-a', b: 'sk-b' },
    arrival: { kind: 'constant', ratePerSec: 20, durationMs: 300 },
  });
  const base = {
    setup,
    seed: 3,
    endMs: 400,
    warmupMs: 0,
    scenario: 'test',
    dialect: 'loxilb' as const,
    ceilings: { max_outstanding: 0, queue_depth: 0, queue_wait_ms: 0 },
    graceMs: 1000,
  };
  const TRANSPORT = ['connection', 'content-length', 'host'];

  it('sends the requests built before, byte for byte; with an envelope they differ', async () => {
    backend = await startBackend();
    await runLoad({ ...base, target: backend.url });
    const plain = backend.seen.slice();
    expect(plain.length).toBe(6);
    for (const s of plain) {
      const tenant = s.headers.authorization === 'Bearer sk-a' ? 'a' : 'b';
      const want = buildRequest(
        {
          tenant,
          promptTokens: 8,
          outputTokens: 3,
          stream: true,
          inference: true,
          id: String(s.headers['x-request-id']),
        },
        setup.apiKeys,
      );
      expect(s.path).toBe(want.path);
      expect(JSON.stringify(s.body)).toBe(want.body);
      const got = Object.fromEntries(Object.entries(s.headers).filter(([k]) => !TRANSPORT.includes(k)));
      expect(got).toEqual(want.headers);
    }
    await backend.close();
    backend = await startBackend();
    const rules = envelopeRules(parsePolicy(POLICY, 'policy.yaml'));
    await runLoad({
      ...base,
      target: backend.url,
      envelope: { rules, tokens: new TokenCache(rules, SECRET, Date.now() / 1000, 60) },
    });
    const sent = backend.seen;
    expect(sent.length).toBe(6);
    expect(sent.filter((s) => s.path === '/v1/batches').length).toBeGreaterThan(0);
    for (const s of sent) {
      expect(s.headers.authorization).not.toMatch(/^Bearer sk-/);
      expect(s.headers['x-intent']).toMatch(/^intent-\d+$/);
    }
  });
});
