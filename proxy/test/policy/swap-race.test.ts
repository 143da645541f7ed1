/**
 * Policy swaps racing traffic: while 40 requests arrive, run, queue and leave, the policy is
 * swapped back and forth 10 times (one of the swaps refused). Every request gets exactly one
 * answer, the refused swap changes nothing, and afterwards no seat, waiter or lease is left.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { addRule, admin, freePort, infer, rule, startProxy, until } from '../helpers.js';
import { chat, PROXY_TEST_POLICY, RecordingBackend } from './policy-helpers.js';

describe('policy swaps racing requests', () => {
  it('answers every request once and leaks nothing', async () => {
    const backend = await new RecordingBackend().start();
    backend.holdMs = 120;
    const dir = mkdtempSync(join(tmpdir(), 'sluice-swap-race-'));
    const proxy = await startProxy({
      policy: { text: PROXY_TEST_POLICY, fileName: 'p.yaml', deferDb: join(dir, 'd.db'), drainPeriodMs: 20 },
    });
    try {
      const port = await freePort();
      await addRule(proxy, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 64 }, [backend]));
      const base = parse(PROXY_TEST_POLICY) as {
        capacity_seats: number;
        classes: Record<string, { guaranteed_seats: number }>;
      };
      const wide = structuredClone(base);
      wide.capacity_seats = 8;
      wide.classes.interactive!.guaranteed_seats = 6;
      const bad = structuredClone(base) as unknown as { capacity_seats: number };
      bad.capacity_seats = 1; // guaranteed seats above capacity: refused
      const requests = Array.from({ length: 40 }, (_, i) =>
        (async () => {
          await new Promise((r) => setTimeout(r, i * 15));
          return infer(port, {
            body: chat({ maxTokens: 10, tag: `r${i}` }),
            path: i % 4 === 0 ? '/v1/batches' : '/v1/chat/completions',
          });
        })(),
      );
      const swaps: number[] = [];
      for (let k = 0; k < 10; k++) {
        await new Promise((r) => setTimeout(r, 55));
        const doc = k === 5 ? bad : k % 2 === 0 ? wide : base;
        swaps.push((await admin(proxy.adminPort, 'PUT', '/sluice/policy', doc)).status);
      }
      const replies = await Promise.all(requests);
      expect(swaps.filter((s) => s === 400)).toHaveLength(1);
      expect(swaps.filter((s) => s === 200)).toHaveLength(9);
      expect(
        ((await admin(proxy.adminPort, 'GET', '/sluice/policy')).json as { version: number }).version,
      ).toBe(10);
      // One answer each: a status from the mapping, never a hang, a 500 or a reset.
      for (const r of replies) expect([200, 202, 503, 504], r.body).toContain(r.status);
      const gate = proxy.policy!.gate;
      // The deferred ones drain; then nothing is held anywhere.
      expect(
        await until(() => gate.deferPending === 0 && gate.leases === 0 && gate.waiting === 0, 15_000),
      ).toBe(true);
      const snap = gate.snapshot();
      for (const c of Object.values(snap.classes)) expect(c.seats_in_use).toBe(0);
      expect(snap.totals.offered).toBe(40);
      expect(snap.policy_swaps).toBe(9);
    } finally {
      await proxy.close();
      await backend.stop();
    }
  }, 60_000);
});
