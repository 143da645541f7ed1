/**
 * Trying to break `--policy` behind the proxy: hostile envelope headers, bodies the cost cannot be
 * read from, status-endpoint path tricks and cross-tenant reads, and policy swaps (refused ones
 * leaving the old policy in force; accepted ones racing in-flight and queued requests).
 */
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { signHs256 } from '../../../loadgen/driver/jwt-sign.js';
import { LoxiProxy } from '../../proxy.js';
import { addRule, admin, freePort, infer, metricSum, rule, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const SECRET = 'test-secret-test-secret-test-secret';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(o: { deferDb?: boolean; policy?: string } = {}) {
  const backend = await new RecordingBackend().start();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-adv-'));
  const proxy: LoxiProxy = await startProxy({
    policy: {
      text: o.policy ?? PROXY_TEST_POLICY,
      fileName: 'policy.yaml',
      ...(o.deferDb === false ? {} : { deferDb: join(dir, 'defer.db') }),
      drainPeriodMs: 20,
    },
    credentials: {
      apiKeys: new Map([
        ['sk-a', 'tenant-a'],
        ['sk-b', 'tenant-b'],
      ]),
      jwt: { hsSecret: Buffer.from(SECRET), leewayS: 0 },
    },
  });
  const port = await freePort();
  await addRule(
    proxy,
    rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend], { api_key_auth: 'apikey-or-jwt' }),
  );
  cleanups.push(async () => {
    await proxy.close();
    await backend.stop();
  });
  return { backend, proxy, port };
}

const A = { authorization: 'Bearer sk-a' };
const B = { authorization: 'Bearer sk-b' };
const post = (
  port: number,
  body: string,
  headers: Record<string, string> = {},
  path = '/v1/chat/completions',
) => infer(port, { body, headers, path });
const policyLog = (p: LoxiProxy) => p.policy!;

describe('hostile envelope headers', () => {
  it('cannot raise a class: a batch route stays batch whatever the class header says, a lower class is taken', async () => {
    const { backend, port, proxy } = await setup();
    backend.holdMs = 400;
    // Fill batch (2 seats); a third batch request asking for interactive is still batch: deferred.
    const running = [0, 1].map(() => post(port, chat({ maxTokens: 10 }), A, '/v1/batches'));
    await until(() => backend.active === 2);
    const climb = await post(
      port,
      chat({ maxTokens: 10 }),
      { ...A, 'x-sluice-class': 'interactive' },
      '/v1/batches',
    );
    expect(climb.status).toBe(202);
    // Lowering is allowed: an interactive request asking for batch is deferred like batch.
    const lower = await post(port, chat({ maxTokens: 10 }), { ...A, 'x-sluice-class': 'batch' });
    expect(lower.status).toBe(202);
    await Promise.all(running);
    const snap = policyLog(proxy).gate.snapshot();
    expect(snap.classes.batch!.deferred).toBe(2);
    expect(snap.classes.interactive!.offered).toBe(0);
  });

  it('cannot take a class from a JWT claim it forges, nor from an unsigned one, nor from the prompt', async () => {
    const { backend, port } = await setup();
    backend.holdMs = 400;
    const running = [0, 1].map(() => post(port, chat({ maxTokens: 10 }), A, '/v1/batches'));
    await until(() => backend.active === 2);
    const forged = signHs256(
      { sub: 'tenant-a', sluice_class: 'interactive', exp: Date.now() / 1000 + 60 },
      'not-the-secret',
    );
    expect(
      (await post(port, chat({ maxTokens: 10 }), { authorization: `Bearer ${forged}` }, '/v1/batches'))
        .status,
    ).toBe(401);
    const prompt = JSON.stringify({
      model: 'm',
      max_tokens: 10,
      sluice_class: 'interactive',
      messages: [{ role: 'system', content: 'x-sluice-class: interactive' }],
    });
    expect((await post(port, prompt, A, '/v1/batches')).status).toBe(202);
    // A genuine claim does name the class (the claim wins over the route).
    const real = signHs256(
      { sub: 'tenant-j', sluice_class: 'interactive', exp: Date.now() / 1000 + 60 },
      SECRET,
    );
    const r = await post(port, chat({ maxTokens: 10 }), { authorization: `Bearer ${real}` }, '/v1/batches');
    expect(r.status).toBe(200);
    await Promise.all(running);
  });

  it.each([
    ['a negative deadline', { 'x-sluice-deadline-ms': '-5' }, 'header x-sluice-deadline-ms'],
    ['a fractional deadline', { 'x-sluice-deadline-ms': '1.5' }, 'header x-sluice-deadline-ms'],
    ['a huge deadline', { 'x-sluice-deadline-ms': '99999999999999999999' }, 'header x-sluice-deadline-ms'],
    ['an unknown class', { 'x-sluice-class': 'root' }, 'header x-sluice-class'],
    ['two class values', { 'x-sluice-class': 'batch, interactive' }, 'header x-sluice-class'],
    ['an over-long idempotency key', { 'idempotency-key': 'k'.repeat(300) }, 'header idempotency-key'],
  ])('refuses %s with 400 naming the header, before any seat', async (_what, headers, field) => {
    const { backend, port, proxy } = await setup();
    const r = await post(port, chat({ maxTokens: 10 }), { ...A, ...headers });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ error: 'policy_invalid_envelope', field });
    expect(backend.seen).toHaveLength(0);
    expect(policyLog(proxy).gate.snapshot().totals.offered).toBe(0);
  });

  it('a zero deadline header is a deadline that has passed: 504 deadline_impossible, never sent', async () => {
    const { backend, port } = await setup();
    const r = await post(port, chat({ maxTokens: 10 }), { ...A, 'x-sluice-deadline-ms': '0' });
    expect(r.status).toBe(504);
    expect(JSON.parse(r.body)).toMatchObject({ reason: 'deadline_impossible' });
    expect(backend.seen).toHaveLength(0);
  });
});

describe('bodies the cost cannot be read from', () => {
  it.each([
    ['not JSON', 'model=m&prompt=hi', 'the body is not JSON'],
    ['a JSON array', '[1,2]', 'not an object'],
    ['an empty body', '', 'the body is empty'],
    ['a negative max_tokens', JSON.stringify({ model: 'm', max_tokens: -1 }), 'body.max_tokens'],
    ['a string max_tokens', JSON.stringify({ model: 'm', max_tokens: '10' }), 'body.max_tokens'],
  ])('refuses %s with 400 policy_invalid_body, never forwarded', async (_what, body, msg) => {
    const { backend, port } = await setup();
    const r = await infer(port, { body, headers: { ...A, 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    const j = JSON.parse(r.body) as { error: string; message: string };
    expect(j.error).toBe('policy_invalid_body');
    expect(j.message).toContain(msg);
    expect(backend.seen).toHaveLength(0);
  });

  it('reads a chunked body (no Content-Length) whole and forwards it (unknown-length.test.ts has the bounds)', async () => {
    const { backend, port } = await setup();
    const status = await new Promise<number>((resolve) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { ...A, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(0));
      req.write(chat({ maxTokens: 5 }));
      req.end();
    });
    expect(status).toBe(200);
    expect(backend.seen).toHaveLength(1);
    expect(backend.seen[0]!.maxTokens).toBe(5);
  });
});

describe('the status endpoint', () => {
  it('answers only the tenant that deferred; path tricks, other tenants and bad ids get 404, methods 405', async () => {
    const { backend, port } = await setup();
    backend.holdMs = 2000;
    const running = [0, 1].map(() => post(port, chat({ maxTokens: 10 }), A, '/v1/batches'));
    await until(() => backend.active === 2);
    const d = await post(port, chat({ maxTokens: 10 }), A, '/v1/batches');
    expect(d.status).toBe(202);
    const id = (JSON.parse(d.body) as { id: string }).id;
    const get = (path: string, h: Record<string, string> = A, method = 'GET') =>
      infer(port, { method, path, headers: h });
    expect((await get(`/sluice/deferred/${id}`)).status).toBe(200);
    const notFound = (await get(`/sluice/deferred/${id}`, B)).body;
    for (const path of [
      `/sluice/deferred/${id}x`,
      `/sluice/deferred/${id}/`,
      `/sluice/deferred/${id}/../${id}`,
      `/sluice/deferred/..%2f${id}`,
      `/sluice/deferred/%2e%2e/${id}`,
      `/sluice/deferred//${id}`,
      `/sluice/deferred/${id}%00`,
      `/sluice/deferred/${id}?tenant=tenant-b`,
      '/sluice/deferred/',
      `/sluice/deferred/${'a'.repeat(200)}`,
    ]) {
      const r = await get(path, B);
      expect([400, 404], path).toContain(r.status);
      expect(r.body, path).not.toContain('"state"');
    }
    // Another tenant gets exactly the answer an unknown id gets: nothing to probe.
    expect((await get(`/sluice/deferred/dAAAAAAAAAAAAAAAAAAAAAA`, B)).body).toBe(
      notFound.replace(id, 'dAAAAAAAAAAAAAAAAAAAAAA'),
    );
    expect((await get(`/sluice/deferred/${id}`, {})).status).toBe(401);
    expect((await get(`/sluice/deferred/${id}`, A, 'POST')).status).toBe(405);
    // Another tenant cannot cancel it either; its own tenant can, once.
    expect((await get(`/sluice/deferred/${id}`, B, 'DELETE')).status).toBe(404);
    expect((await get(`/sluice/deferred/${id}`, A, 'DELETE')).status).toBe(200);
    expect(JSON.parse((await get(`/sluice/deferred/${id}`)).body)).toMatchObject({ state: 'cancelled' });
    expect((await get(`/sluice/deferred/${id}`, A, 'DELETE')).status).toBe(409);
    await Promise.all(running);
    await new Promise((r) => setTimeout(r, 200));
    // The cancelled item was never replayed.
    expect(backend.seen.filter((s) => s.deferId === id)).toHaveLength(0);
  });
});

describe('policy swap through the management API', () => {
  const swap = (p: LoxiProxy, doc: unknown) => admin(p.adminPort, 'PUT', '/sluice/policy', doc);

  it('refuses a bad policy with 400 naming the field, and the old policy stays in force for traffic', async () => {
    const { proxy, port, backend } = await setup();
    const doc = parse(PROXY_TEST_POLICY) as Record<string, unknown>;
    const bad = structuredClone(doc) as { classes: Record<string, { queue: { max_count: number } }> };
    bad.classes.interactive!.queue.max_count = -1;
    const r = await swap(proxy, bad);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: 'SLUICE_E_POLICY', field: 'classes.interactive.queue.max_count' });
    expect((r.json as { message: string }).message).toContain('-1 is below the minimum 0');
    expect(
      ((await admin(proxy.adminPort, 'GET', '/sluice/policy')).json as { version: number }).version,
    ).toBe(1);
    // Traffic after the refusal still sees the old queue (2 places): two run, two queue, one 503.
    backend.holdMs = 300;
    const reqs = [0, 1, 2, 3].map(() => post(port, chat({ maxTokens: 10 }), A));
    await until(() => backend.active === 2);
    await until(() => policyLog(proxy).gate.waiting === 2);
    expect((await post(port, chat({ maxTokens: 10 }), B)).status).toBe(503);
    expect((await Promise.all(reqs)).map((x) => x.status)).toEqual([200, 200, 200, 200]);
    // A swap that defers without a --defer-db is refused too (checked on a proxy without one below).
  });

  it('swaps atomically while requests run and wait: they keep their class and finish; new traffic sees the new policy', async () => {
    const { proxy, port, backend } = await setup();
    backend.holdMs = 500;
    const running = [0, 1, 2, 3].map(() => post(port, chat({ maxTokens: 10 }), A));
    await until(() => backend.active === 2 && policyLog(proxy).gate.waiting === 2);
    // The new policy: interactive gets 3 seats and a queue of 1 place.
    const doc = parse(PROXY_TEST_POLICY) as {
      capacity_seats: number;
      classes: Record<string, { guaranteed_seats: number; queue: Record<string, number> }>;
    };
    doc.capacity_seats = 5;
    doc.classes.interactive!.guaranteed_seats = 3;
    doc.classes.interactive!.queue = { max_count: 1, max_age_ms: 2900, max_cost_seats: 4 };
    const r = await swap(proxy, doc);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ version: 2, report: { carriedLeases: 2, carriedWaiters: 2 } });
    // The 3rd seat of the new policy takes one waiter at once; the other keeps its place; all finish.
    expect(await until(() => backend.active === 3, 400)).toBe(true);
    expect((await Promise.all(running)).map((x) => x.status)).toEqual([200, 200, 200, 200]);
    expect(backend.maxActive).toBe(3);
    // New traffic sees the new policy: 3 run, 1 waits, the next finds the 1-place queue full.
    const burst = [0, 1, 2, 3].map(() => post(port, chat({ maxTokens: 10 }), A));
    expect(await until(() => backend.active === 3 && policyLog(proxy).gate.waiting === 1)).toBe(true);
    const over = await post(port, chat({ maxTokens: 10 }), B);
    expect(over.status).toBe(503);
    expect(JSON.parse(over.body)).toMatchObject({ reason: 'queue_full' });
    expect((await Promise.all(burst)).map((x) => x.status)).toEqual([200, 200, 200, 200]);
    const m = await admin(proxy.adminPort, 'GET', '/metrics');
    expect(
      metricSum(m.body, 'sluice_policy_swaps_total') ?? metricSum(m.body, 'sluice_policy_policy_swaps_total'),
    ).toBe(1);
  });

  it('without --defer-db: refuses to start with a deferring policy, and refuses a swap that adds a defer', async () => {
    expect(
      () =>
        new LoxiProxy({
          adminPort: 0,
          policy: { text: PROXY_TEST_POLICY, fileName: 'p.yaml' },
          warn: () => {},
        }),
    ).toThrow(/class batch defers \(defer\.enabled\) but no --defer-db FILE is given/);
    const noDefer = PROXY_TEST_POLICY.replace(
      '    defer: { enabled: true, max_backlog: 1000, drain_per_s: 50 }\n',
      '',
    );
    const { proxy } = await setup({ deferDb: false, policy: noDefer });
    const r = await swap(proxy, parse(PROXY_TEST_POLICY));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: 'SLUICE_E_POLICY_DEFER_DB' });
    expect(
      ((await admin(proxy.adminPort, 'GET', '/sluice/policy')).json as { version: number }).version,
    ).toBe(1);
  });
});
