/**
 * The sec.ai.deny audit trail: a non-admit decision's decision-log record
 * carries `event`, `model` (from the body), tenant, decision and reason, and
 * goes to stderr as one JSON line; a shedding storm is rate-limited on
 * stderr (at most N lines per second, then one "suppressed K" line).
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { AuditLog } from '../../audit.js';
import { type DecisionRecord, MemoryDecisionLog } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, freePort, infer, rule, startProxy, TestBackend, until } from '../helpers.js';

const deny: DecisionRecord = {
  time: '2026-01-01T00:00:00.000Z',
  service: '127.0.0.1:1',
  tenant: 't',
  decision: 'refuse',
  reason: 'capacity_shed',
  outcome: 'shed',
  status: 429,
  error: 'admission_capacity_shed',
  method: 'POST',
  path: '/v1/chat/completions',
  protocol: 'http1',
  endpoint: null,
  queued_ms: null,
  ttft_ms: null,
  duration_ms: 1,
  prompt_tokens: null,
  output_tokens: null,
  event: 'sec.ai.deny',
  model: 'm',
};

describe('sec.ai.deny records of a proxy', () => {
  const log = new MemoryDecisionLog();
  const lines: string[] = [];
  let p: LoxiProxy;
  let b: TestBackend;
  let port: number;

  beforeAll(async () => {
    b = await new TestBackend('b').start();
    p = await startProxy({
      decisionLog: log,
      credentials: { apiKeys: new Map([['sk-a', 'tenant-a']]) },
      audit: { perSecond: 100, write: (l) => lines.push(l) },
    });
    port = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 1 }, [b], {
        api_key_auth: 'required',
      }),
    );
  });

  afterAll(async () => {
    await p.close();
    await b.stop();
  });

  test('a refusal is in the decision log and on the audit output with service, model, tenant, decision and reason', async () => {
    const auth = { authorization: 'Bearer sk-a' };
    const busy = infer(port, { hold: 600, headers: auth });
    await until(() => b.active === 1);
    const refused = await infer(port, {
      headers: auth,
      body: JSON.stringify({ model: 'llama-x', messages: [], hold_ms: 1 }),
    });
    expect([429, 503]).toContain(refused.status);
    const unauth = await infer(port, { body: JSON.stringify({ model: 'llama-y' }) });
    expect(unauth.status).toBe(401);
    expect((await busy).status).toBe(200);
    const mine = log.records.filter((r) => r.service === `127.0.0.1:${port}`);
    const denies = mine.filter((r) => r.event === 'sec.ai.deny');
    expect(denies).toHaveLength(2);
    const shed = denies.find((r) => r.decision === 'refuse')!;
    expect(shed).toMatchObject({ model: 'llama-x', tenant: 'tenant-a', service: `127.0.0.1:${port}` });
    expect(shed.reason).not.toBe('');
    // The 401 comes before the body is read: no model.
    expect(denies.find((r) => r.decision === 'unauthorized')).toMatchObject({ model: null, tenant: null });
    // The admitted request is no deny.
    expect(mine.find((r) => r.decision === 'admit')?.event).toBeUndefined();
    const out = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(out).toContainEqual({
      event: 'sec.ai.deny',
      time: shed.time,
      service: shed.service,
      model: 'llama-x',
      tenant: 'tenant-a',
      decision: 'refuse',
      reason: shed.reason,
      status: shed.status,
      error: shed.error,
    });
  });
});

describe('the rate limit on the audit output', () => {
  test('at most N lines per second; the rest are reported as one "suppressed K" line when the window ends', () => {
    let now = 10_000;
    const lines: string[] = [];
    const a = new AuditLog({ perSecond: 3, write: (l) => lines.push(l), now: () => now });
    for (let i = 0; i < 100; i++) a.record(deny);
    expect(lines).toHaveLength(3);
    now += 1_000;
    a.record(deny);
    expect(lines.slice(3).map((l) => JSON.parse(l).event)).toEqual(['sec.ai.deny.suppressed', 'sec.ai.deny']);
    expect(JSON.parse(lines[3]!).suppressed).toBe(97);
    a.dispose();
  });

  test('a storm that stops is still reported: the suppressed line comes at the end of its window', async () => {
    const lines: string[] = [];
    const a = new AuditLog({ perSecond: 1, write: (l) => lines.push(l) });
    for (let i = 0; i < 5; i++) a.record(deny);
    expect(lines).toHaveLength(1);
    expect(await until(() => lines.length === 2, 3_000)).toBe(true);
    expect(JSON.parse(lines[1]!)).toEqual({ event: 'sec.ai.deny.suppressed', suppressed: 4, window_s: 1 });
    a.dispose();
  });

  test('the lines go to stderr by default, one JSON object per line', () => {
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const a = new AuditLog({ perSecond: 2 });
      for (let i = 0; i < 3; i++) a.record(deny);
      a.dispose();
      const written = spy.mock.calls.map((c) => String(c[0]));
      expect(written).toHaveLength(3);
      for (const w of written) expect(w.endsWith('\n') && !w.slice(0, -1).includes('\n')).toBe(true);
      expect(JSON.parse(written[2]!)).toMatchObject({ event: 'sec.ai.deny.suppressed', suppressed: 1 });
    } finally {
      spy.mockRestore();
    }
  });
});
