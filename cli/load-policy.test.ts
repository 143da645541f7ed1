/**
 * `sluice load` of a policy scenario behind `--policy`, over loopback: the proxy verifies HS256
 * JWTs with the secret the driver signs with (`--jwt-secret-file`), in front of an emulated
 * engine; a 2-second scenario written here sends two tenants in two classes (one by its class
 * claim, one by the default) with deadlines and intent keys. The proxy's /metrics and decision log
 * then show every request in its client's class and tenant, with the deadline taken from the
 * header and the intent key sent. Without the flag, the command exits 2 naming it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEmulator } from '../loadgen/emulator/emulator.js';
import type { DecisionRecord } from '../proxy/decision-log.js';
import { addRule, admin, freePort, metricSum, rule, startProxy } from '../proxy/test/helpers.js';
import { loadCommand } from './load.js';

const SECRET = 'load-policy-test-secret';

/** Seats enough that every request is admitted: the classes are what is measured. */
const POLICY = `version: 1
capacity_seats: 64
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 1 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 32
    queue: { max_count: 8, max_age_ms: 1000, max_cost_seats: 8 }
    deadline: { default_ms: 8000, client_may_shorten: true }
  batch:
    priority: 10
    guaranteed_seats: 32
    queue: { max_count: 8, max_age_ms: 1000, max_cost_seats: 8 }
    deadline: { default_ms: 600000, client_may_shorten: true }
envelope:
  class_claim: sluice_class
  default_class: interactive
  client_header: { deadline_ms: x-sluice-deadline-ms }
retry: { budget_per_intent: 3 }
`;

const SCENARIO = `name: load-policy-test
seed: 5
duration_s: 2
warmup_s: 0
gate:
  policy: policy.yaml
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  retry: { kind: none }
  prompt_tokens: { kind: fixed, value: 32 }
  output_tokens: { kind: fixed, value: 4 }
  tenants:
    - id: team-a
      arrival: { kind: constant, rate_per_sec: 5 }
      envelope: { deadline_ms: 4000 }
    - id: eval-lab
      arrival: { kind: constant, rate_per_sec: 3 }
      envelope: { class: batch, deadline_ms: 60000, idempotency: none }
`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

/** The files of a run; `h2`: every request over HTTP/2 (h2c), else HTTP/1.1. */
function files(h2 = false): { scenario: string; secret: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-load-policy-'));
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  writeFileSync(
    join(dir, 'scenario.yaml'),
    h2 ? SCENARIO.replace('clients:\n', 'clients:\n  h2_share: 1\n') : SCENARIO,
  );
  writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
  return { scenario: join(dir, 'scenario.yaml'), secret: join(dir, 'secret') };
}

/** Runs `sluice load` in this process; its stdout, stderr and exit code. */
async function load(args: string[]): Promise<{ code: number | undefined; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await loadCommand().parseAsync(args, { from: 'user' });
    return { code: process.exitCode === undefined ? undefined : Number(process.exitCode), out, err };
  } finally {
    process.exitCode = before;
    vi.restoreAllMocks();
  }
}

describe('sluice load of a policy scenario behind sluice proxy --policy', () => {
  it.each([
    ['HTTP/1.1', false],
    ['HTTP/2', true],
  ])(
    'sends each client in its class and tenant, with its deadline and intent key (%s)',
    async (_, h2) => {
      const f = files(h2);
      const emu = await startEmulator({ profile: 'llama-3.1-8b-h100' });
      const records: DecisionRecord[] = [];
      const proxy = await startProxy({
        policy: { text: POLICY, fileName: 'policy.yaml' },
        credentials: { jwt: { hsSecret: Buffer.from(SECRET) }, tenantClaim: 'sub' },
        decisionLog: { write: (r) => records.push(r), close: async () => {}, dropped: 0 },
      });
      cleanups.push(async () => {
        await proxy.close();
        await emu.close();
      });
      const port = await freePort();
      await addRule(
        proxy,
        rule(port, { fc_mode: 'off' }, [{ port: Number(new URL(emu.url).port) }], { api_key_auth: 'jwt' }),
      );
      const r = await load([
        '--target',
        `http://127.0.0.1:${port}`,
        '--scenario',
        f.scenario,
        '--jwt-secret-file',
        f.secret,
        '--grace-s',
        '3',
        '--json',
      ]);
      expect(r.err).not.toContain('error');
      const summary = JSON.parse(r.out) as { attempts: number; outcomes: Record<string, number> };
      // 5/s and 3/s for 2 s.
      expect(summary.attempts).toBe(16);
      expect(summary.outcomes.completed).toBe(16);

      const m = await admin(proxy.adminPort, 'GET', '/metrics');
      const admitted = (cls: string) =>
        metricSum(
          m.body,
          'sluice_policy_dispositions_total',
          (l) => l.includes(`class="${cls}"`) && l.includes('disposition="admit"'),
        );
      expect(admitted('interactive')).toBe(10);
      expect(admitted('batch')).toBe(6);

      const pol = (x: DecisionRecord) => (x as unknown as { policy: Record<string, unknown> }).policy;
      expect(records.length).toBe(16);
      // The protocol asked for is the one the proxy saw: the envelope rides HTTP/2 as well.
      expect(new Set(records.map((x) => x.protocol))).toEqual(new Set([h2 ? 'h2' : 'http1']));
      const byTenant = (t: string) => records.filter((x) => x.tenant === t).map(pol);
      const a = byTenant('team-a');
      const b = byTenant('eval-lab');
      expect(a.length).toBe(10);
      expect(b.length).toBe(6);
      for (const p of a) {
        expect(p).toMatchObject({ class: 'interactive', class_source: 'default', tenant: 'team-a' });
        expect(p).toMatchObject({ tenant_source: 'claim', deadline_source: 'header' });
        // The header sent the deadline left (4000 ms at the first send), not the class's 8000.
        expect(p.deadline_ms as number).toBeLessThanOrEqual(4000);
        expect(p.deadline_ms as number).toBeGreaterThan(3000);
        expect(p.idempotency_key).toMatch(/^intent-\d+$/);
      }
      expect(new Set(a.map((p) => p.idempotency_key)).size).toBe(10);
      for (const p of b) {
        expect(p).toMatchObject({ class: 'batch', class_source: 'claim', tenant: 'eval-lab' });
        expect(p).toMatchObject({ deadline_source: 'header', idempotency_key: null });
        expect(p.deadline_ms as number).toBeGreaterThan(59_000);
      }
    },
    60_000,
  );

  it('follows deferred answers (202 + Location) to their end: drained ones complete, expired ones time out', async () => {
    // One batch seat: a case holds it about a second (200 tokens), so the rest are deferred and
    // drained one by one; eval-rush's cases may wait 1.5 s only, so some of theirs expire.
    const policy = `version: 1
capacity_seats: 4
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 1 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 3
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 8000 }
  batch:
    priority: 10
    guaranteed_seats: 1
    tenant_max_share_pct: 100
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 600000, client_may_shorten: true }
    defer: { enabled: true, max_backlog: 100, drain_per_s: 50 }
envelope:
  class_claim: sluice_class
  default_class: interactive
  client_header: { deadline_ms: x-sluice-deadline-ms }
`;
    const scenario = `name: load-defer-test
seed: 3
duration_s: 2
warmup_s: 0
gate:
  policy: policy.yaml
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  retry: { kind: none }
  prompt_tokens: { kind: fixed, value: 32 }
  output_tokens: { kind: fixed, value: 200 }
  tenants:
    - id: eval-lab
      arrival: { kind: constant, rate_per_sec: 2 }
      envelope: { class: batch, deadline_ms: 60000, idempotency: none }
    - id: eval-rush
      arrival: { kind: constant, rate_per_sec: 2, start_ms: 100 }
      envelope: { class: batch, deadline_ms: 1500, idempotency: none }
`;
    const dir = mkdtempSync(join(tmpdir(), 'sluice-load-defer-'));
    writeFileSync(join(dir, 'policy.yaml'), policy);
    writeFileSync(join(dir, 'scenario.yaml'), scenario);
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const emu = await startEmulator({ profile: 'llama-3.1-8b-h100' });
    const proxy = await startProxy({
      policy: { text: policy, fileName: 'policy.yaml', deferDb: join(dir, 'defer.db'), drainPeriodMs: 20 },
      credentials: { jwt: { hsSecret: Buffer.from(SECRET) }, tenantClaim: 'sub' },
    });
    cleanups.push(async () => {
      await proxy.close();
      await emu.close();
    });
    const port = await freePort();
    await addRule(
      proxy,
      rule(port, { fc_mode: 'off' }, [{ port: Number(new URL(emu.url).port) }], { api_key_auth: 'jwt' }),
    );
    const out = join(dir, 'out');
    const r = await load([
      '--target',
      `http://127.0.0.1:${port}`,
      '--scenario',
      join(dir, 'scenario.yaml'),
      '--jwt-secret-file',
      join(dir, 'secret'),
      '--grace-s',
      '15',
      '--out',
      out,
      '--no-report',
    ]);
    expect(r.err).not.toContain('error');
    const m = await admin(proxy.adminPort, 'GET', '/metrics');
    const deferredByProxy = metricSum(
      m.body,
      'sluice_policy_dispositions_total',
      (l) => l.includes('class="batch"') && l.includes('disposition="defer"'),
    );
    expect(deferredByProxy).toBeGreaterThanOrEqual(2);
    const followed = (
      JSON.parse(readFileSync(join(out, 'load.json'), 'utf8')) as { deferred_followed: number }
    ).deferred_followed;
    expect(followed).toBe(deferredByProxy);
    expect(r.out).toContain(`deferred      ${followed} answered 202`);
    const lines = readFileSync(join(out, 'requests.csv'), 'utf8').trim().split('\n');
    const cols = lines[0]!.split(',');
    const rows = lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
    const of = (t: string) => rows.filter((x) => x.tenant === t);
    expect(of('eval-lab')).toHaveLength(4);
    expect(of('eval-rush')).toHaveLength(4);
    // The patient tenant's cases all complete, the deferred ones after their drain.
    for (const x of of('eval-lab')) expect([x.outcome, x.generated_tokens]).toEqual(['completed', '200']);
    // The hasty tenant's deferred cases expire in the store: timed out (defer_expired), never an
    // unexplained failure. One sent straight through may be cut at the deadline the proxy
    // propagates to the backend (504 backend_timeout).
    const rush = of('eval-rush').map((x) => `${x.outcome}:${x.error}`);
    for (const x of rush)
      expect(['completed:', 'timed_out:defer_expired', 'failed:backend_timeout']).toContain(x);
    expect(rush.filter((x) => x === 'timed_out:defer_expired').length).toBeGreaterThanOrEqual(1);
    // The disposition stays visible in the simulator's columns: one `defer` row per 202 the
    // proxy answered, each expired one with its reason; every row in the class it claimed.
    expect(cols).toEqual(
      expect.arrayContaining(['class', 'disposition', 'reason', 'deadline_met', 'useful']),
    );
    const defers = rows.filter((x) => x.disposition === 'defer');
    expect(defers).toHaveLength(deferredByProxy ?? -1);
    for (const x of rows) expect(x.class).toBe('batch');
    for (const x of rows.filter((y) => y.error === 'defer_expired'))
      expect([x.disposition, x.reason, x.useful]).toEqual(['defer', 'defer_expired', 'false']);
    const drained = defers.filter((x) => x.outcome === 'completed');
    expect(drained.length).toBeGreaterThanOrEqual(1);
    for (const x of drained) expect(x.tenant === 'eval-lab' || x.deadline_met === 'true').toBe(true);
    // The summary counts what the records say: the deferred completions among its completed.
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      completed: number;
      outcomes: Record<string, number>;
    };
    expect(summary.completed).toBe(rows.filter((x) => x.outcome === 'completed').length);
    expect(summary.outcomes.timed_out ?? 0).toBe(rows.filter((x) => x.outcome === 'timed_out').length);
    expect(summary.outcomes.failed ?? 0).toBe(rows.filter((x) => x.outcome === 'failed').length);
  }, 60_000);

  it('exits 2 naming --jwt-secret-file when the scenario has a policy and the flag is missing', async () => {
    const f = files();
    const r = await load(['--target', 'http://127.0.0.1:9', '--scenario', f.scenario, '--json']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('give --jwt-secret-file FILE');
    expect(r.err).toContain('policy.yaml');
  });

  it('refuses --jwt-secret-file for a scenario without a policy (exit 2)', async () => {
    const f = files();
    const r = await load([
      '--target',
      'http://127.0.0.1:9',
      '--scenario',
      'scenarios/http2-mix.yaml',
      '--jwt-secret-file',
      f.secret,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--jwt-secret-file: the scenario has no gate.policy');
  });
});
