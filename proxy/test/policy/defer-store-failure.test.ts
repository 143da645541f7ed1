/**
 * `--policy` behind the proxy with a defer store that dies (its SQLite file closed under it): the
 * proxy stays up, its drain ticks stop instead of throwing out of the timer, a request that would
 * defer is refused 503 `policy_class_capacity` with no Retry-After (recovery unknown), live work
 * still runs, the status endpoint answers 503, and /metrics counts the failures.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../prom-text.js';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, admin, freePort, infer, rule, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const backend = await new RecordingBackend().start();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-store-'));
  const proxy: LoxiProxy = await startProxy({
    policy: {
      text: PROXY_TEST_POLICY,
      fileName: 'policy.yaml',
      deferDb: join(dir, 'defer.db'),
      drainPeriodMs: 20,
    },
  });
  const port = await freePort();
  await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend]));
  cleanups.push(async () => {
    await proxy.close();
    await backend.stop();
  });
  return { backend, proxy, port };
}

const batch = (port: number, hold: number) =>
  infer(port, { body: chat({ maxTokens: 10, hold }), path: '/v1/batches' });

/** A sample of the policy's metrics, summed over its labels. */
async function metric(proxy: LoxiProxy, name: string): Promise<number> {
  const text = (await admin(proxy.adminPort, 'GET', '/metrics')).body;
  return parsePrometheusText(text)
    .samples.filter((s) => s.name === name)
    .reduce((a, s) => a + s.value, 0);
}

describe('--policy with a failing defer store', () => {
  it('a dead SQLite store: no crash, defers refused 503 without Retry-After, live work runs, status 503, failures counted', async () => {
    const { backend, proxy, port } = await setup();
    // Batch has 2 seats and no queue: two long cases hold them, the third defers.
    const running = [batch(port, 1500), batch(port, 1500)];
    expect(await until(async () => backend.active === 2, 5000)).toBe(true);
    const d = await batch(port, 50);
    expect(d.status).toBe(202);
    const id = (JSON.parse(d.body) as { id: string }).id;

    proxy.policy!.store.close();
    const refused = await batch(port, 50);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(refused.body)).toMatchObject({
      error: 'policy_class_capacity',
      reason: 'class_capacity',
      recovery: 'unknown',
    });
    expect((await infer(port, { body: chat({ maxTokens: 10 }) })).status).toBe(200);
    const st = await infer(port, { method: 'GET', path: `/sluice/deferred/${id}` });
    expect(st.status).toBe(503);
    expect(JSON.parse(st.body)).toMatchObject({
      error: 'policy_defer_store_unavailable',
      recovery: 'unknown',
    });

    // The long cases finish; the drain keeps meeting the dead store (every 20 ms) and stops each time.
    for (const r of await Promise.all(running)) expect(r.status).toBe(200);
    expect(
      await until(
        async () => (await metric(proxy, 'sluice_policy_defer_store_stopped_drains_total')) > 5,
        5000,
      ),
    ).toBe(true);
    expect(await metric(proxy, 'sluice_policy_defer_store_failures_total')).toBeGreaterThan(5);
    // The deferred case was never replayed: its item could not be claimed.
    expect(backend.seen.filter((s) => s.deferId !== undefined)).toEqual([]);
    expect((await infer(port, { body: chat({ maxTokens: 10 }) })).status).toBe(200);
  });
});
