/**
 * The defer queue survives a `kill -9` of the real `sluice proxy` process: requests deferred with
 * 202, the proxy SIGKILLed while the drain is replaying them, restarted on the same --defer-db;
 * every deferred id reaches `done`, and the loopback backend completes each one exactly once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, infer, type ProxyProcess, rule, spawnProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

const N = 20;
const procs: ProxyProcess[] = [];
let backend: RecordingBackend | null = null;
afterEach(async () => {
  for (const p of procs.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await backend?.stop();
  backend = null;
});

describe('the defer queue under kill -9 of the proxy', () => {
  it('loses nothing: every deferred id is done after a restart; only an item draining at the kill is delivered (and completed) twice', async () => {
    backend = await new RecordingBackend().start();
    backend.holdMs = 500;
    const dir = mkdtempSync(join(tmpdir(), 'sluice-kill9-'));
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, PROXY_TEST_POLICY);
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, JSON.stringify({ keys: { 'sk-a': 'tenant-a' } }));
    const db = join(dir, 'defer.db');
    const [port, adminPort] = [await freePort(), await freePort()];
    const start = (): ProxyProcess => {
      const p = spawnProxy(
        [
          '--admin',
          `127.0.0.1:${adminPort}`,
          '--policy',
          policyFile,
          '--defer-db',
          db,
          '--api-keys',
          keys,
          '--health-interval-ms',
          '0',
        ],
        {
          rules: [
            rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend!], {
              api_key_auth: 'required',
            }),
          ],
          env: { ...process.env, SLUICE_PROXY_NODE_FLAGS: '' },
        },
      );
      procs.push(p);
      return p;
    };
    const auth = { authorization: 'Bearer sk-a' };
    const first = start();
    expect(await until(() => first.out().includes('management API'), 15_000)).toBe(true);

    // Once every client has its answer, the proxy is killed the moment the next replay reaches
    // the backend (the 3rd or later): the drain is mid-way, some items done, those held at the
    // backend draining, the rest pending.
    let inflightAtKill: string[] = [];
    let armed = false;
    backend.onRequest = (s) => {
      if (!armed || s.deferId === undefined || inflightAtKill.length > 0) return;
      if (backend!.seen.filter((x) => x.deferId !== undefined).length < 3) return;
      inflightAtKill = [...backend!.inflightDeferIds];
      first.child.kill('SIGKILL');
    };
    const replies = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        infer(port, {
          path: '/v1/batches',
          body: chat({ maxTokens: 10, tag: `t${i}` }),
          headers: { ...auth, 'idempotency-key': `intent-${i}` },
        }),
      ),
    );
    armed = true;
    const deferred = replies
      .filter((r) => r.status === 202)
      .map((r) => (JSON.parse(r.body) as { id: string }).id);
    // Batch has 2 seats and no queue: those that found a seat ran (200), the rest were deferred.
    expect(replies.filter((r) => r.status === 200).length + deferred.length).toBe(N);
    expect(deferred.length).toBeGreaterThanOrEqual(12);
    expect(await until(() => inflightAtKill.length > 0, 15_000)).toBe(true);
    expect(await first.exit).toBe(null);
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(inflightAtKill.length).toBeGreaterThan(0);
    const completedBeforeKill = [...backend.completedByKey.keys()].filter((k) =>
      backend!.seen.some((s) => s.key === k && s.deferId !== undefined),
    ).length;
    expect(completedBeforeKill).toBeGreaterThan(0);
    expect(completedBeforeKill).toBeLessThan(deferred.length);

    const second = start();
    expect(await until(() => second.out().includes('management API'), 15_000)).toBe(true);
    // The restarted proxy found the held items draining and turned them back into pending (at
    // least those held at the backend; at most the class's 2 seats: one may have been claimed and
    // not yet sent).
    const recovered = Number(/"event":"defer_recovered","items":(\d+)/.exec(second.err())?.[1]);
    expect(recovered).toBeGreaterThanOrEqual(inflightAtKill.length);
    expect(recovered).toBeLessThanOrEqual(2);
    const state = async (id: string) =>
      JSON.parse(
        (await infer(port, { method: 'GET', path: `/sluice/deferred/${id}`, headers: auth })).body,
      ) as {
        state: string;
        result: { status: number } | null;
      };
    expect(
      await until(async () => {
        for (const id of deferred) if ((await state(id)).state !== 'done') return false;
        return true;
      }, 30_000),
    ).toBe(true);
    for (const id of deferred) expect((await state(id)).result?.status).toBe(200);

    // At the backend: every deferred id arrived. Items draining at the kill were delivered twice (their first answer never reached the dead
    // proxy), with the same idempotency key both times.
    const replays = backend.seen.filter((s) => s.deferId !== undefined);
    expect(new Set(replays.map((s) => s.deferId))).toEqual(new Set(deferred));
    const deliveries = new Map<string, number>();
    for (const s of replays) deliveries.set(s.deferId!, (deliveries.get(s.deferId!) ?? 0) + 1);
    const twice = [...deliveries].filter(([, n]) => n > 1).map(([id]) => id);
    // Delivered twice: only items draining at the kill (those held at the backend, and one whose
    // request was already on its way); never more than the store recovered.
    for (const id of inflightAtKill) expect(twice).toContain(id);
    expect(twice.length).toBeLessThanOrEqual(recovered);
    for (const [, n] of deliveries) expect(n).toBeLessThanOrEqual(2);
    const keys2 = new Set(replays.map((s) => s.key));
    expect(keys2.size).toBe(deferred.length);
    // Completed at the backend at least once each. Twice only for an item delivered twice: a held
    // replay may finish writing its answer to the kernel just after the kill, an answer the dead
    // proxy never read (at-least-once: a backend that honours the key completes it once).
    const twiceKeys = new Set(replays.filter((s) => twice.includes(s.deferId!)).map((s) => s.key));
    for (const k of keys2) {
      const n = backend.completedByKey.get(k!) ?? 0;
      expect(n, `intent ${k}`).toBeGreaterThanOrEqual(1);
      expect(n, `intent ${k}`).toBeLessThanOrEqual(twiceKeys.has(k) ? 2 : 1);
    }
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  }, 90_000);
});
