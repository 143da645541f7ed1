/**
 * The management API: create/replace semantics (omitted keeps, 0 inherits,
 * null refused, bounds, depth-without-wait, in-place changes waking
 * waiters, re-creates draining them), GET with fc_effective, DELETE,
 * maintenance drain, the bearer token, invalid input named by field.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  admin,
  expectSettled,
  freePort,
  infer,
  rule,
  sleep,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
let b2: TestBackend;
const LB = '/netlox/v1/config/loadbalancer';

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  b2 = await new TestBackend('b2').start();
  p = await startProxy({ env: { LLB_FC_MAX_OUTSTANDING: '7' } });
});

afterAll(async () => {
  await p.close();
  await b1.stop();
  await b2.stop();
});

const settled = (): Promise<void> => expectSettled(p);

type Eff = Record<string, unknown> & { source: Record<string, string> };
async function effective(port: number): Promise<{ args: Record<string, unknown>; eff: Eff }> {
  const g = await admin(p.adminPort, 'GET', `${LB}/all`);
  const all = (g.json as { lbAttr: { serviceArguments: Record<string, unknown> }[] }).lbAttr;
  const r = all.find((x) => x.serviceArguments.port === port)!;
  return { args: r.serviceArguments, eff: r.serviceArguments.fc_effective as Eff };
}

describe('create, read back, replace', () => {
  test('fc_effective reports values and sources; omitted keeps, 0 inherits the env', async () => {
    const port = await freePort();
    await addRule(
      p,
      rule(port, { fc_mode: 'enforce', fc_max_outstanding: 16, fc_max_queue_depth: 32 }, [b1]),
    );
    let { args, eff } = await effective(port);
    expect(args.fc_max_outstanding).toBe(16);
    expect(eff.max_outstanding).toBe(16);
    expect(eff.source.max_outstanding).toBe('rule');
    expect(eff.queue_depth).toBe(32);
    expect(eff.queue_wait_ms).toBe(5000);
    expect(eff.queue_memory_bound_mib).toBe(32);
    expect(eff.mode).toBe('enforce');
    // Replace carrying only a new ceiling: the depth is kept.
    const r = await admin(p.adminPort, 'POST', LB, rule(port, { fc_max_outstanding: 24 }, [b1]));
    expect(r.status).toBe(200);
    expect((r.json as { outcome: string }).outcome).toBe('updated_in_place');
    ({ eff } = await effective(port));
    expect(eff.max_outstanding).toBe(24);
    expect(eff.queue_depth).toBe(32);
    // 0 returns to the environment.
    await admin(p.adminPort, 'POST', LB, rule(port, { fc_max_outstanding: 0 }, [b1]));
    ({ eff } = await effective(port));
    expect(eff.max_outstanding).toBe(7);
    expect(eff.source.max_outstanding).toBe('env');
  });

  test('null, out-of-bounds, wrong types, unknown fields and depth-without-wait are 400 naming the field; the rule is unchanged', async () => {
    const port = await freePort();
    await addRule(p, rule(port, { fc_mode: 'enforce', fc_max_outstanding: 4, fc_max_queue_depth: 8 }, [b1]));
    const cases: [Record<string, unknown>, string][] = [
      [{ fc_max_outstanding: null }, 'serviceArguments.fc_max_outstanding'],
      [{ fc_max_outstanding: 100001 }, 'serviceArguments.fc_max_outstanding'],
      [{ fc_max_queue_depth: 70000 }, 'serviceArguments.fc_max_queue_depth'],
      [{ fc_max_outstanding: '4' }, 'serviceArguments.fc_max_outstanding'],
      [{ fc_mode: 'sometimes' }, 'serviceArguments.fc_mode'],
      [{ fc_max_outstandin: 3 }, 'serviceArguments.fc_max_outstandin'],
      [{ fc_max_queue_wait_ms: 0 }, 'serviceArguments.fc_max_queue_wait_ms'],
      [{ colour: 'blue' }, 'serviceArguments.colour'],
    ];
    for (const [fc, field] of cases) {
      const r = await admin(p.adminPort, 'POST', LB, rule(port, fc, [b1]));
      expect(r.status, JSON.stringify(fc)).toBe(400);
      const body = r.json as { field: string; error: string; message: string };
      expect(body.field).toBe(field);
      expect(body.error).toMatch(/^SLUICE_E_/);
    }
    const { eff } = await effective(port);
    expect(eff.max_outstanding).toBe(4);
    expect(eff.queue_depth).toBe(8);
    const bad = await admin(p.adminPort, 'POST', LB, undefined, { raw: '{"serviceArguments": ' });
    expect(bad.status).toBe(400);
    expect((bad.json as { field: string }).field).toBe('body');
    const arr = await admin(p.adminPort, 'POST', LB, [1, 2]);
    expect(arr.status).toBe(400);
    const ep = await admin(p.adminPort, 'POST', LB, {
      serviceArguments: { externalIP: '127.0.0.1', port, mode: 4, sse_mode: true },
      endpoints: [{ endpointIP: '127.0.0.1', targetPort: 'x' }],
    });
    expect((ep.json as { field: string }).field).toBe('endpoints[0].targetPort');
    expect((await admin(p.adminPort, 'PATCH', LB, {})).status).toBe(405);
    expect((await admin(p.adminPort, 'GET', '/nope')).status).toBe(404);
  });

  test('an admission-only replace wakes waiters into the new units', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const busy = infer(port, { hold: 1500 });
    await sleep(50);
    const waiter = infer(port, { hold: 10 });
    await sleep(100);
    expect((await effective(port)).eff.queued).toBe(1);
    await admin(p.adminPort, 'POST', LB, rule(port, { fc_max_outstanding: 2 }, [b1]));
    const w = await waiter;
    expect(w.status).toBe(200);
    expect(w.ms).toBeLessThan(800);
    await busy;
    await settled();
  });

  test('a replace that changes more than the gate re-creates the entry and drains its waiters 503', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const busy = infer(port, { hold: 600 });
    await sleep(50);
    const waiter = infer(port, { hold: 10 });
    await sleep(100);
    const r = await admin(p.adminPort, 'POST', LB, rule(port, {}, [b1, b2]));
    expect((r.json as { outcome: string }).outcome).toBe('recreated');
    const w = await waiter;
    expect(w.status).toBe(503);
    expect(JSON.parse(w.body).error).toBe('admission_drained');
    expect(w.headers['retry-after']).toBe('5');
    expect(w.headers.connection).toBe('close');
    expect((await busy).status).toBe(200);
    await settled();
  });

  test('DELETE drains waiters, stops the listener, and 404s an unknown key', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const busy = infer(port, { hold: 500 });
    await sleep(50);
    const waiter = infer(port, { hold: 10 });
    await sleep(100);
    const path = `${LB}/externalipaddress/127.0.0.1/port/${port}/protocol/tcp`;
    expect((await admin(p.adminPort, 'DELETE', path)).status).toBe(200);
    const w = await waiter;
    expect(w.status).toBe(503);
    expect(JSON.parse(w.body).error).toBe('admission_drained');
    expect((await busy).status).toBe(200);
    expect(await until(async () => (await infer(port, { hold: 1 })).status === 0, 3000)).toBe(true);
    const again = await admin(p.adminPort, 'DELETE', path);
    expect(again.status).toBe(404);
    expect((again.json as { field: string }).field).toBe('key');
    const g = await admin(p.adminPort, 'GET', `${LB}/all`);
    expect(JSON.stringify(g.json)).not.toContain(`"port":${port},`);
  });

  test('a port already in use is refused 409 and nothing is stored', async () => {
    const r = await admin(p.adminPort, 'POST', LB, rule(b1.port, { fc_mode: 'enforce' }, [b2]));
    expect(r.status).toBe(409);
    const g = await admin(p.adminPort, 'GET', `${LB}/all`);
    expect(JSON.stringify(g.json)).not.toContain(`"port":${b1.port},`);
  });
});

describe('maintenance drain', () => {
  test('enforcing pools refuse 503 gateway_draining and drain waiters; observe pools keep admitting', async () => {
    const enforce = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5000 },
        [b1],
      ),
    );
    const observe = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'observe', fc_max_outstanding: 1 }, [b2]),
    );
    const busy = infer(enforce, { hold: 500 });
    await sleep(50);
    const waiter = infer(enforce, { hold: 10 });
    await sleep(100);
    const on = await admin(p.adminPort, 'PUT', '/netlox/v1/maintenance', { enabled: true });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, refusing_new_inference: true });
    const w = await waiter;
    expect(w.status).toBe(503);
    expect(JSON.parse(w.body).error).toBe('admission_drained');
    const fresh = await infer(enforce, { hold: 10 });
    expect(fresh.status).toBe(503);
    expect(JSON.parse(fresh.body).error).toBe('gateway_draining');
    expect(fresh.headers['retry-after']).toBe('5');
    expect(fresh.headers.connection).toBe('close');
    expect((await infer(observe, { hold: 10 })).status).toBe(200);
    const g = await admin(p.adminPort, 'GET', '/netlox/v1/maintenance');
    expect(g.json).toMatchObject({ enabled: true, refusing_new_inference: true, in_flight_requests: 1 });
    expect((await busy).status).toBe(200);
    const off = await admin(p.adminPort, 'PUT', '/netlox/v1/maintenance', { enabled: false });
    expect(off.json).toMatchObject({ enabled: false, refusing_new_inference: false, in_flight_requests: 0 });
    expect((await infer(enforce, { hold: 10 })).status).toBe(200);
    for (const [body, field] of [
      [{ enabled: 'yes' }, 'enabled'],
      [{ enabled: true, extra: 1 }, 'extra'],
      [[true], 'body'],
    ] as const) {
      const r = await admin(p.adminPort, 'PUT', '/netlox/v1/maintenance', body);
      expect(r.status).toBe(400);
      expect((r.json as { field: string }).field).toBe(field);
    }
    await settled();
  });
});

describe('admin token', () => {
  test('with a token every route needs the bearer', async () => {
    const q = await startProxy({ adminToken: 'tok-123' });
    try {
      expect((await admin(q.adminPort, 'GET', `${LB}/all`)).status).toBe(401);
      expect((await admin(q.adminPort, 'GET', '/metrics', undefined, { token: 'nope' })).status).toBe(401);
      const ok = await admin(q.adminPort, 'GET', `${LB}/all`, undefined, { token: 'tok-123' });
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ lbAttr: [] });
    } finally {
      await q.close();
    }
  });
});
