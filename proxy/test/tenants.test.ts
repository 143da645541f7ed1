/**
 * Credentials on the wire: 401 before the gate for a missing or invalid
 * credential, tenants from API keys and JWTs, the tenant share refusing
 * 429 admission_tenant_share while other tenants admit, and the JSONL
 * decision log with its schema.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signHs256 } from '../../loadgen/driver/jwt-sign.js';
import { JsonlDecisionLog } from '../decision-log.js';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  bookkeeping,
  freePort,
  infer,
  metricSum,
  rule,
  sleep,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

const secret = Buffer.from('test-secret');
const logFile = join(mkdtempSync(join(tmpdir(), 'sluice-proxy-')), 'decisions.jsonl');
let p: LoxiProxy;
let b1: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  p = await startProxy({
    decisionLog: new JsonlDecisionLog(logFile),
    credentials: {
      apiKeys: new Map([
        ['sk-a', 'tenant-a'],
        ['sk-b', 'tenant-b'],
      ]),
      jwt: { hsSecret: secret },
      tenantClaim: 'org',
    },
  });
});

afterAll(async () => {
  await p.close();
  await b1.stop();
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('credentials', () => {
  test('required: 401 without or with an unknown key, before the gate; a known key is admitted', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b1], {
        api_key_auth: 'required',
      }),
    );
    const none = await infer(port, { hold: 1 });
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body).error.code).toBe('unauthorized');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect((await infer(port, { hold: 1, headers: bearer('sk-zzz') })).status).toBe(401);
    expect((await infer(port, { hold: 1, headers: { 'x-tenant-id': 'tenant-a' } })).status).toBe(401);
    expect((await infer(port, { hold: 1, headers: bearer('sk-a') })).status).toBe(200);
    expect((await infer(port, { hold: 1, headers: { 'x-api-key': 'sk-b' } })).status).toBe(200);
    const text = p.metricsText();
    expect(
      metricSum(
        text,
        'loxilb_ai_admission_decisions_total',
        (l) => l.includes(`:${port}"`) && l.includes('reason="admitted"'),
      ),
    ).toBe(2);
  });

  test('jwt: HS256 with the tenant claim; expired and forged tokens are 401', async () => {
    const port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b1], {
        api_key_auth: { mode: 'jwt' },
      }),
    );
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await infer(port, { hold: 1, headers: bearer(signHs256({ org: 't1', exp: now + 60 }, secret)) }))
        .status,
    ).toBe(200);
    expect(
      (await infer(port, { hold: 1, headers: bearer(signHs256({ org: 't1', exp: now - 60 }, secret)) }))
        .status,
    ).toBe(401);
    expect((await infer(port, { hold: 1, headers: bearer(signHs256({ org: 't1' }, 'wrong')) })).status).toBe(
      401,
    );
    expect((await infer(port, { hold: 1, headers: bearer('sk-a') })).status).toBe(401);
    // Model listing is an OpenAI route: it needs the credential too, but bypasses the ceilings.
    expect((await infer(port, { method: 'GET', path: '/v1/models' })).status).toBe(401);
    expect((await infer(port, { method: 'GET', path: '/health' })).status).toBe(200);
  });
});

describe('tenant share', () => {
  test('a tenant at its share is refused 429 admission_tenant_share while another tenant admits', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 4, fc_tenant_max_share_pct: 50 },
        [b1],
        {
          api_key_auth: 'apikey-or-jwt',
        },
      ),
    );
    const a = [
      infer(port, { hold: 400, headers: bearer('sk-a') }),
      infer(port, { hold: 400, headers: bearer('sk-a') }),
    ];
    await sleep(100);
    const third = await infer(port, { hold: 1, headers: bearer('sk-a') });
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body).error).toBe('admission_tenant_share');
    expect(third.headers['x-loxilb-admission-inflight']).toBe('2');
    expect(third.headers['x-loxilb-admission-limit']).toBe('4');
    expect((await infer(port, { hold: 1, headers: bearer('sk-b') })).status).toBe(200);
    await Promise.all(a);
    expect(await until(async () => (await bookkeeping(p)).inflight === 0)).toBe(true);
    expect((await bookkeeping(p)).anomalies).toBe(0);
  });
});

describe('decision log', () => {
  test('one JSON line per request with the documented fields', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 2, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const first = infer(port, { hold: 200, stream: true });
    // The second queues behind the first only once the first runs (on a busy machine that takes a while).
    expect(await until(() => b1.active === 1)).toBe(true);
    const second = infer(port, { hold: 10 });
    await Promise.all([first, second]);
    const mine = async () =>
      readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.service === `127.0.0.1:${port}`);
    expect(await until(async () => (await mine()).length === 2, 3000)).toBe(true);
    const [a, b] = await mine();
    const keys = [
      'time',
      'service',
      'tenant',
      'decision',
      'reason',
      'outcome',
      'status',
      'error',
      'method',
      'path',
      'protocol',
      'endpoint',
      'queued_ms',
      'ttft_ms',
      'duration_ms',
      'prompt_tokens',
      'output_tokens',
    ];
    expect(Object.keys(a!)).toEqual(keys);
    expect(a).toMatchObject({
      decision: 'admit',
      reason: 'admitted',
      outcome: 'completed',
      status: 200,
      queued_ms: null,
    });
    expect(a!.ttft_ms as number).toBeGreaterThan(10);
    expect(a!.ttft_ms as number).toBeLessThan(150);
    expect(a).toMatchObject({ prompt_tokens: 7, output_tokens: 2 });
    expect(b).toMatchObject({
      decision: 'queued',
      reason: 'admitted',
      outcome: 'completed',
      status: 200,
      ttft_ms: null,
    });
    expect(b!.queued_ms as number).toBeGreaterThan(50);
    expect(b).toMatchObject({ prompt_tokens: 3, output_tokens: 1 });
    expect(Number.isNaN(Date.parse(a!.time as string))).toBe(false);
  });
});
