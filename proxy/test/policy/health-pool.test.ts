/**
 * The proxy's conditions reach its policy, over loopback: an open circuit breaker on the pool the
 * policy fronts pauses the defer drain and shows on the scorecard (unhealthy, then a recovery);
 * a `{kind: pool}` degrade is forwarded to the rule of that name while it has a usable endpoint;
 * a policy name two rules carry is refused, at rule apply and at swap, naming the field.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { DecisionRecord } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, admin, freePort, infer, metricSum, rule, sleep, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const post = (port: number, body: string, path = '/v1/chat/completions') => infer(port, { body, path });

async function metric(proxy: LoxiProxy, name: string): Promise<number | null> {
  const m = await admin(proxy.adminPort, 'GET', '/metrics');
  return metricSum(m.body, name);
}

/** One class of 1 seat, no queue, degrading to the pool `spare`. */
const POOL_POLICY = (pool = 'spare') => `version: 1
capacity_seats: 2
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 1 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 1
    lendable_pct: 0
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 5000, client_may_shorten: true }
    degrade:
      - { kind: pool, pool: ${pool} }
  other:
    priority: 10
    guaranteed_seats: 1
    lendable_pct: 0
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 5000, client_may_shorten: true }
envelope:
  default_class: interactive
retry: { budget_per_intent: 3 }
`;

describe('--policy: health and fallback pools', () => {
  it('pauses the defer drain while the fronted pool has an open breaker, and resumes it (and counts the recovery) once it closes', async () => {
    const backend = await new RecordingBackend().start();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-health-'));
    const proxy = await startProxy({
      policy: {
        text: PROXY_TEST_POLICY,
        fileName: 'policy.yaml',
        deferDb: join(dir, 'd.db'),
        drainPeriodMs: 20,
      },
      monitor: { healthIntervalMs: 25, breakerFailures: 1, breakerOpenMs: 150, probeTimeoutMs: 500 },
    });
    cleanups.push(async () => {
      await proxy.close();
      await backend.stop();
    });
    const port = await freePort();
    await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend]));
    // Batch: 2 seats, no queue, defers. Two held requests fill it; the third is deferred.
    const held = [0, 1].map(() => post(port, chat({ hold: 500, maxTokens: 10 }), '/v1/batches'));
    await until(() => backend.active === 2);
    const d = await post(port, chat({ tag: 'deferred', maxTokens: 10 }), '/v1/batches');
    expect(d.status).toBe(202);
    const id = (JSON.parse(d.body) as { id: string }).id;
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(0);
    // The endpoint's probes fail: its breaker opens, the policy sees the pool unhealthy.
    backend.healthStatus = 503;
    expect(await until(async () => (await metric(proxy, 'sluice_policy_unhealthy')) === 1, 3000)).toBe(true);
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    // The batch seats are free, but nothing is fed back during the outage.
    await sleep(400);
    expect(backend.seen.filter((s) => s.deferId === id)).toEqual([]);
    const pending = await admin(proxy.adminPort, 'GET', '/metrics');
    expect(metricSum(pending.body, 'sluice_policy_recoveries_total')).toBe(0);
    // Probes pass again: the breaker closes after its open time, the drain resumes.
    backend.healthStatus = 200;
    expect(await until(() => backend.seen.some((s) => s.deferId === id), 5000)).toBe(true);
    expect(await until(async () => (await metric(proxy, 'sluice_policy_recoveries_total')) === 1, 3000)).toBe(
      true,
    );
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(0);
  });

  it('reports maintenance as unhealthy to the policy', async () => {
    const backend = await new RecordingBackend().start();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-maint-'));
    const proxy = await startProxy({
      policy: {
        text: PROXY_TEST_POLICY,
        fileName: 'policy.yaml',
        deferDb: join(dir, 'd.db'),
        drainPeriodMs: 20,
      },
    });
    cleanups.push(async () => {
      await proxy.close();
      await backend.stop();
    });
    const port = await freePort();
    await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend]));
    expect((await post(port, chat())).status).toBe(200);
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(0);
    expect((await admin(proxy.adminPort, 'PUT', '/netlox/v1/maintenance', { enabled: true })).status).toBe(
      200,
    );
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(1);
    expect((await admin(proxy.adminPort, 'PUT', '/netlox/v1/maintenance', { enabled: false })).status).toBe(
      200,
    );
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(0);
  });

  it('forwards a pool degrade to the rule named by the pool while it has a usable endpoint, and not once it is gone', async () => {
    const main = await new RecordingBackend().start();
    const spare = await new RecordingBackend().start();
    const records: DecisionRecord[] = [];
    const proxy = await startProxy({
      policy: { text: POOL_POLICY(), fileName: 'policy.yaml' },
      decisionLog: { write: (r) => records.push(r), close: async () => {}, dropped: 0 },
    });
    cleanups.push(async () => {
      await proxy.close();
      await main.stop();
      await spare.stop();
    });
    const port = await freePort();
    const sparePort = await freePort();
    await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [main]));
    await addRule(
      proxy,
      rule(sparePort, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [spare], { name: 'spare' }),
    );
    // The one interactive seat is taken; the next request is degraded to the spare pool.
    const first = post(port, chat({ hold: 400, tag: 'first' }));
    await until(() => main.active === 1);
    const second = await post(port, chat({ tag: 'second' }));
    expect(second.status).toBe(200);
    expect(JSON.parse(second.body)).toMatchObject({ echo: 'second' });
    expect(spare.seen.map((s) => JSON.parse(s.body).tag)).toEqual(['second']);
    expect(main.seen.map((s) => JSON.parse(s.body).tag)).toEqual(['first']);
    // The remaining deadline goes with it.
    expect(spare.seen[0]!.deadlineMs).toBeGreaterThan(0);
    expect(spare.seen[0]!.deadlineMs).toBeLessThanOrEqual(5000);
    await until(() => records.length >= 1);
    const logs = records.map((r) => (r as unknown as { policy?: Record<string, unknown> }).policy);
    expect(logs.find((l) => l?.degrade === 'pool:spare')).toMatchObject({
      disposition: 'degrade',
      pool_service: `127.0.0.1:${sparePort}`,
    });
    const m = await admin(proxy.adminPort, 'GET', '/metrics');
    expect(metricSum(m.body, 'sluice_policy_degraded_total', (l) => l.includes('mode="pool:spare"'))).toBe(1);
    // Without the spare rule the pool is not available: the request is refused, not sent anywhere.
    expect(
      (
        await admin(
          proxy.adminPort,
          'DELETE',
          `/netlox/v1/config/loadbalancer/externalipaddress/127.0.0.1/port/${sparePort}/protocol/tcp`,
        )
      ).status,
    ).toBe(200);
    const third = await post(port, chat({ tag: 'third' }));
    expect(third.status).toBe(503);
    expect(JSON.parse(third.body)).toMatchObject({ reason: 'class_capacity' });
    expect(spare.seen).toHaveLength(1);
    expect((await first).status).toBe(200);
  });

  it('rejects dependency_open while the rule named by depends_on has no usable endpoint, and admits once it is back', async () => {
    const main = await new RecordingBackend().start();
    const tools = await new RecordingBackend().start();
    const policy = POOL_POLICY().replace(
      '    degrade:\n      - { kind: pool, pool: spare }\n',
      '    depends_on: [tools]\n',
    );
    expect(policy).toContain('depends_on: [tools]');
    const proxy = await startProxy({
      policy: { text: policy, fileName: 'policy.yaml' },
      monitor: { healthIntervalMs: 25, breakerFailures: 1, breakerOpenMs: 150, probeTimeoutMs: 500 },
    });
    cleanups.push(async () => {
      await proxy.close();
      await main.stop();
      await tools.stop();
    });
    const port = await freePort();
    await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [main]));
    await addRule(
      proxy,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 64 }, [tools], { name: 'tools' }),
    );
    expect((await post(port, chat({ maxTokens: 10 }))).status).toBe(200);
    tools.healthStatus = 503;
    expect(await until(async () => (await post(port, chat({ maxTokens: 10 }))).status === 503, 3000)).toBe(
      true,
    );
    const r = await post(port, chat({ maxTokens: 10 }));
    expect(JSON.parse(r.body)).toMatchObject({ reason: 'dependency_open', recovery: 'unknown' });
    // The fronted pool itself is whole: the policy is not unhealthy for a dependency's outage.
    expect(await metric(proxy, 'sluice_policy_unhealthy')).toBe(0);
    tools.healthStatus = 200;
    expect(await until(async () => (await post(port, chat({ maxTokens: 10 }))).status === 200, 3000)).toBe(
      true,
    );
  });

  it('refuses a second rule carrying a pool name, and a swap whose pool name two rules carry, naming the field', async () => {
    const a = await new RecordingBackend().start();
    const proxy = await startProxy({ policy: { text: POOL_POLICY(), fileName: 'policy.yaml' } });
    cleanups.push(async () => {
      await proxy.close();
      await a.stop();
    });
    const [p1, p2, p3, p4] = [await freePort(), await freePort(), await freePort(), await freePort()];
    await addRule(proxy, rule(p1, { fc_mode: 'enforce', fc_max_outstanding: 8 }, [a], { name: 'spare' }));
    const dup = await admin(
      proxy.adminPort,
      'POST',
      '/netlox/v1/config/loadbalancer',
      rule(p2, { fc_mode: 'enforce', fc_max_outstanding: 8 }, [a], { name: 'spare' }),
    );
    expect(dup.status).toBe(409);
    expect(dup.body).toContain('serviceArguments.name');
    expect(proxy.rules()).toHaveLength(1);
    // Two rules named "twin" are fine while no policy uses the name ...
    await addRule(proxy, rule(p3, { fc_mode: 'enforce', fc_max_outstanding: 8 }, [a], { name: 'twin' }));
    await addRule(proxy, rule(p4, { fc_mode: 'enforce', fc_max_outstanding: 8 }, [a], { name: 'twin' }));
    // ... but a policy whose pool would map to both is refused and the old one stays.
    const swap = await admin(proxy.adminPort, 'PUT', '/sluice/policy', parse(POOL_POLICY('twin')));
    expect(swap.status).toBe(400);
    expect(swap.body).toContain('classes.interactive.degrade[0].pool');
    expect(proxy.policy!.version).toBe(1);
    expect(proxy.policy!.policy.classes[0]!.degrade[0]).toMatchObject({ kind: 'pool', pool: 'spare' });
  });
});
