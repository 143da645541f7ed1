/**
 * `--policy` behind the proxy, over loopback: each disposition as HTTP (admit with the remaining
 * deadline propagated, queue then 504, degrade rewriting max_tokens, defer 202 + Location and its
 * replay, reject with its reason), the envelope's sources in the decision log, and /metrics.
 */
import { mkdtempSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../decision-log.js';
import { parsePrometheusText } from '../../prom-text.js';
import type { LoxiProxy, ProxyOptions } from '../../proxy.js';
import { addRule, admin, freePort, infer, inferH2, rule, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  o: { policy?: string; keys?: Record<string, string>; extra?: Partial<ProxyOptions> } = {},
) {
  const backend = await new RecordingBackend().start();
  const records: DecisionRecord[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
  const proxy: LoxiProxy = await startProxy({
    policy: {
      text: o.policy ?? PROXY_TEST_POLICY,
      fileName: 'policy.yaml',
      deferDb: join(dir, 'defer.db'),
      drainPeriodMs: 20,
    },
    decisionLog: { write: (r) => records.push(r), close: async () => {}, dropped: 0 },
    ...(o.keys === undefined ? {} : { credentials: { apiKeys: new Map(Object.entries(o.keys)) } }),
    ...o.extra,
  });
  const port = await freePort();
  await addRule(
    proxy,
    rule(
      port,
      { fc_mode: 'enforce', fc_max_outstanding: 64 },
      [backend],
      o.keys === undefined ? {} : { api_key_auth: 'required' },
    ),
  );
  cleanups.push(async () => {
    await proxy.close();
    await backend.stop();
  });
  return { backend, proxy, port, records, dir };
}

const post = (
  port: number,
  body: string,
  headers: Record<string, string> = {},
  path = '/v1/chat/completions',
) => infer(port, { body, headers, path });

describe('--policy dispositions as HTTP', () => {
  it('admits and propagates the remaining deadline; a client header may shorten it, never lengthen it', async () => {
    const { backend, port, records } = await setup();
    const a = await post(port, chat({ maxTokens: 10 }));
    expect(a.status).toBe(200);
    const b = await post(port, chat({ maxTokens: 10 }), { 'x-sluice-deadline-ms': '800' });
    expect(b.status).toBe(200);
    const c = await post(port, chat({ maxTokens: 10 }), { 'x-sluice-deadline-ms': '999999' });
    expect(c.status).toBe(200);
    const [sa, sb, sc] = backend.seen;
    expect(sa!.deadlineMs).toBeGreaterThan(2500);
    expect(sa!.deadlineMs).toBeLessThanOrEqual(3000);
    expect(sb!.deadlineMs).toBeLessThanOrEqual(800);
    expect(sb!.deadlineMs).toBeGreaterThan(400);
    // The longer header was ignored: the class's 3000 ms, not the client's 999999.
    expect(sc!.deadlineMs).toBeLessThanOrEqual(3000);
    await until(() => records.length === 3);
    const logs = records.map((r) => (r as unknown as { policy: Record<string, unknown> }).policy);
    expect(logs[0]).toMatchObject({
      disposition: 'admit',
      class: 'interactive',
      class_source: 'default',
      deadline_source: 'default',
      tenant: 'anonymous',
      tenant_source: 'anonymous',
    });
    expect(logs[1]).toMatchObject({ deadline_source: 'header', deadline_ms: 800 });
    expect(logs[2]).toMatchObject({
      deadline_source: 'default',
      ignored: ['x-sluice-deadline-ms: 999999 (longer than 3000)'],
    });
  });

  it('queues past the class seats, dispatches in turn, 503 on a full queue, and refuses at once a wait that cannot meet its deadline', async () => {
    const { backend, port } = await setup();
    backend.holdMs = 400;
    // 2 seats: two run, two queue (max_count 2), the fifth finds the queue full.
    const first = [1, 2, 3, 4].map(() => post(port, chat({ maxTokens: 10 })));
    await until(() => backend.active === 2);
    const fifth = await post(port, chat({ maxTokens: 10 }));
    expect(fifth.status).toBe(503);
    expect(JSON.parse(fifth.body)).toMatchObject({
      error: 'policy_queue_full',
      reason: 'queue_full',
      class: 'interactive',
    });
    const replies = await Promise.all(first);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(backend.maxActive).toBe(2);
    // With the service rate now known (400 ms per seat), a wait that cannot finish in time is
    // refused at once: 504 deadline_impossible, not a request parked until it fails.
    backend.holdMs = 2500;
    const long = [post(port, chat({ maxTokens: 10 })), post(port, chat({ maxTokens: 10 }))];
    await until(() => backend.active === 2);
    const early = await post(port, chat({ maxTokens: 10 }), { 'x-sluice-deadline-ms': '300' });
    expect(early.status).toBe(504);
    expect(JSON.parse(early.body)).toMatchObject({
      error: 'policy_deadline_impossible',
      recovery: 'unknown',
    });
    expect(early.headers['retry-after']).toBeUndefined();
    expect(early.ms).toBeLessThan(250);
    await Promise.all(long);
  });

  it('answers 504 when a queued request reaches its queue age bound (the service rate still unknown)', async () => {
    const { backend, port } = await setup();
    backend.holdMs = 2500;
    const long = [post(port, chat({ maxTokens: 10 })), post(port, chat({ maxTokens: 10 }))];
    await until(() => backend.active === 2);
    const waited = await post(port, chat({ maxTokens: 10 }));
    expect(waited.status).toBe(504);
    expect(JSON.parse(waited.body)).toMatchObject({ error: 'policy_queue_max_age', reason: 'max_age' });
    expect(waited.headers['retry-after']).toBeUndefined();
    expect(waited.ms).toBeGreaterThanOrEqual(1450);
    expect(waited.ms).toBeLessThan(2400);
    // It never reached the backend.
    expect(backend.seen).toHaveLength(2);
    await Promise.all(long);
  });

  it('degrades to the declared max_tokens by rewriting the body, also for a body without max_tokens', async () => {
    const { backend, port, records } = await setup();
    backend.holdMs = 600;
    // Without max_tokens a request is charged the class's most seats (2): it fills the class, and a
    // second unbounded one waits in the queue (tried before degrading) until the first ends.
    const big = post(port, chat({ tag: 'big' }));
    await until(() => backend.active === 1);
    const q = post(port, chat({ tag: 'queued' }));
    const r1 = await big;
    expect(r1.status).toBe(200);
    const r2 = await q;
    expect(r2.status).toBe(200);
    expect(backend.seen[0]!.maxTokens).toBeUndefined();
    expect(backend.maxActive).toBe(1);
    // A lone 2-seat request with one seat taken: it degrades to max_tokens 16 (1 seat).
    backend.holdMs = 500;
    const one = post(port, chat({ maxTokens: 5, tag: 'one' }));
    await until(() => backend.active === 1);
    const deg = await post(port, chat({ maxTokens: 1500, tag: 'deg' }));
    expect(deg.status).toBe(200);
    const seenDeg = backend.seen.find((s) => s.body.includes('"deg"'))!;
    expect(seenDeg.maxTokens).toBe(16);
    await one;
    await until(() => records.length >= 4);
    const log = records
      .map((r) => (r as unknown as { policy: Record<string, unknown> }).policy)
      .find((p) => p.degrade !== undefined);
    expect(log).toMatchObject({
      disposition: 'degrade',
      degrade: 'max_tokens:16',
      max_tokens_sent: 16,
      max_tokens: 1500,
    });
  });

  it('defers with 202 + Location, replays to the backend with the idempotency key, and reports the result to its tenant only', async () => {
    const { backend, port, proxy } = await setup({ keys: { 'sk-a': 'tenant-a', 'sk-b': 'tenant-b' } });
    backend.holdMs = 300;
    const auth = (k: string) => ({ authorization: `Bearer ${k}` });
    // Batch has 2 seats and no queue: the first two run, the rest defer.
    const replies = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        post(
          port,
          chat({ maxTokens: 10, tag: `b${i}` }),
          { ...auth('sk-a'), 'idempotency-key': `intent-${i}` },
          '/v1/batches',
        ),
      ),
    );
    const deferred = replies.filter((r) => r.status === 202);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    expect(deferred).toHaveLength(3);
    for (const r of deferred) {
      const b = JSON.parse(r.body) as { id: string; status_url: string; state: string };
      expect(r.headers.location).toBe(`/sluice/deferred/${b.id}`);
      expect(b.state).toBe('pending');
      expect(b.id).toMatch(/^d[A-Za-z0-9_-]{22}$/);
    }
    const ids = deferred.map((r) => (JSON.parse(r.body) as { id: string }).id);
    const status = (id: string, key: string) =>
      infer(port, { method: 'GET', path: `/sluice/deferred/${id}`, headers: auth(key) });
    expect(
      await until(async () => {
        for (const id of ids) if (JSON.parse((await status(id, 'sk-a')).body).state !== 'done') return false;
        return true;
      }, 10_000),
    ).toBe(true);
    for (const id of ids) {
      const s = JSON.parse((await status(id, 'sk-a')).body) as { result: { status: number; body: string } };
      expect(s.result.status).toBe(200);
      expect(JSON.parse(s.result.body)).toMatchObject({ id: 'c' });
      // Another tenant, no credential, a path trick: all 404 or 401, never the item.
      const other = await status(id, 'sk-b');
      expect(other.status).toBe(404);
      expect(other.body).not.toContain('tenant-a');
      expect((await infer(port, { method: 'GET', path: `/sluice/deferred/${id}` })).status).toBe(401);
    }
    // Replays carried the client's idempotency key and the defer id; each completed once.
    const replayed = backend.seen.filter((s) => s.deferId !== undefined);
    expect(new Set(replayed.map((s) => s.deferId))).toEqual(new Set(ids));
    for (const s of replayed) expect(s.key).toMatch(/^intent-\d$/);
    expect(backend.maxActive).toBeLessThanOrEqual(2);
    // A replayed answer is kept for its client: useful on time, not work done after a disconnect.
    const m = (await admin(proxy.adminPort, 'GET', '/metrics')).body;
    expect(m).toMatch(/^sluice_policy_useful_on_time_total\{class="batch"\} 5$/m);
    expect(m).toMatch(/^sluice_policy_wasted_completions_total\{class="batch",why="after_disconnect"\} 0$/m);
  });

  it('rejects a tenant above its quota with 429 and no Retry-After', async () => {
    const policy = PROXY_TEST_POLICY.replace(
      '    lendable_pct: 0\n    queue: { max_count: 2',
      '    lendable_pct: 0\n    tenant_max_share_pct: 50\n    queue: { max_count: 2',
    );
    const { backend, port } = await setup({ policy, keys: { 'sk-a': 'tenant-a' } });
    backend.holdMs = 400;
    const h = { authorization: 'Bearer sk-a' };
    const one = post(port, chat({ maxTokens: 10 }), h);
    await until(() => backend.active === 1);
    const two = await post(port, chat({ maxTokens: 10 }), h);
    expect(two.status).toBe(429);
    expect(JSON.parse(two.body)).toMatchObject({
      error: 'policy_tenant_quota',
      reason: 'tenant_quota',
      recovery: 'unknown',
    });
    expect(two.headers['retry-after']).toBeUndefined();
    expect((await one).status).toBe(200);
  });

  it('decides h2 streams too: admitted with the deadline header, deferred with 202 + Location on its stream', async () => {
    const { backend, port } = await setup();
    backend.holdMs = 400;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      // The h2 helper's body has no max_tokens: 2 seats, all of batch's.
      const first = inferH2(session, { path: '/v1/batches', headers: { 'x-sluice-deadline-ms': '100' } });
      await until(() => backend.active === 1);
      const second = await inferH2(session, { path: '/v1/batches' });
      expect(second.status).toBe(202);
      const id = (JSON.parse(second.body) as { id: string }).id;
      expect(second.headers.location).toBe(`/sluice/deferred/${id}`);
      expect((await first).status).toBe(200);
      // batch keeps its deadline (client_may_shorten: false): the header was ignored.
      expect(backend.seen[0]!.deadlineMs).toBeGreaterThan(500_000);
      expect(
        await until(async () => {
          const r = await infer(port, { method: 'GET', path: `/sluice/deferred/${id}` });
          return (JSON.parse(r.body) as { state: string }).state === 'done';
        }, 10_000),
      ).toBe(true);
    } finally {
      session.close();
    }
  });

  it('exports the scorecard on /metrics in the Prometheus text format', async () => {
    const { proxy, port } = await setup();
    await post(port, chat({ maxTokens: 10 }));
    const m = await admin(proxy.adminPort, 'GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.body).toMatch(/^# TYPE sluice_policy_offered_total counter$/m);
    expect(m.body).toMatch(/^sluice_policy_offered_total\{class="interactive"\} 1$/m);
    expect(m.body).toMatch(
      /^sluice_policy_dispositions_total\{class="interactive",disposition="admit"\} 1$/m,
    );
    // Still one well-formed exposition: every sample line belongs to a family declared before it.
    const declared = new Set<string>();
    for (const line of m.body.split('\n')) {
      const t = /^# TYPE (\S+) /.exec(line);
      if (t) declared.add(t[1]!);
      else if (line !== '' && !line.startsWith('#')) {
        const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0];
        const base = name.replace(/_(bucket|sum|count)$/, '');
        expect(declared.has(name) || declared.has(base), line).toBe(true);
      }
    }
    // The repo's strict parser reads every line, and each family is declared exactly once.
    const parsed = parsePrometheusText(m.body);
    expect(parsed.badLines).toBe(0);
    const typeLines = m.body.split('\n').filter((l) => l.startsWith('# TYPE '));
    const names = typeLines.map((l) => l.split(' ')[2]!);
    expect(names.length).toBeGreaterThan(10);
    expect(new Set(names).size).toBe(names.length);
    // The seat-holding time is one summary family with _sum and _count samples, not two counters.
    expect(parsed.types.get('sluice_policy_duration_seconds')).toBe('summary');
    expect(parsed.types.has('sluice_policy_duration_seconds_sum')).toBe(false);
    expect(parsed.types.has('sluice_policy_duration_seconds_count')).toBe(false);
    const count = parsed.samples.find(
      (x) => x.name === 'sluice_policy_duration_seconds_count' && x.labels.class === 'interactive',
    );
    expect(count?.value).toBe(1);
    const sum = parsed.samples.find(
      (x) => x.name === 'sluice_policy_duration_seconds_sum' && x.labels.class === 'interactive',
    );
    expect(sum?.value).toBeGreaterThan(0);
    // Counter families' samples all end in _total; a summary's only in _sum/_count.
    for (const x of parsed.samples) {
      const t = parsed.types.get(x.name) ?? parsed.types.get(x.name.replace(/_(sum|count|bucket)$/, ''));
      if (t === 'summary') expect(x.name, x.name).toMatch(/_(sum|count)$/);
    }
  });
});
