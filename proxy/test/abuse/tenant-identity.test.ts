/**
 * Where a tenant comes from: a verified credential on a service that
 * enforces one, never under `optional`; the rule's own
 * `api_key_auth.tenant_claim` names the claim, and a tenant_claim (or a
 * secondaryIPs list) that cannot be honoured is refused 400, never stored
 * and ignored.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signHs256 } from '../../../loadgen/driver/jwt-sign.js';
import type { DecisionRecord } from '../../decision-log.js';
import type { LoxiProxy } from '../../proxy.js';
import {
  addRule,
  admin,
  expectSettled,
  freePort,
  infer,
  rule,
  startProxy,
  TestBackend,
  until,
} from '../helpers.js';

const secret = Buffer.from('tenant-secret');
const records: DecisionRecord[] = [];
let p: LoxiProxy;
let b: TestBackend;
const LB = '/netlox/v1/config/loadbalancer';
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const exp = (): number => Math.floor(Date.now() / 1000) + 600;

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy({
    decisionLog: { write: (r) => records.push(r), close: async () => {}, dropped: 0 },
    credentials: { apiKeys: new Map([['sk-a', 'tenant-a']]), jwt: { hsSecret: secret } },
  });
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

/** The tenant logged for the last request on `port`. */
async function tenantOf(port: number, n: number): Promise<(string | null | undefined)[]> {
  const mine = () => records.filter((r) => r.service === `127.0.0.1:${port}`);
  expect(await until(() => mine().length >= n)).toBe(true);
  return mine().map((r) => r.tenant);
}

describe('tenant identity', () => {
  test('under optional a credential is checked but names no tenant: its requests share the keyless slot', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 4, fc_tenant_max_share_pct: 50 },
        [b],
        { api_key_auth: 'optional' },
      ),
    );
    const held = [0, 1].map(() => infer(port, { hold: 400, headers: bearer('sk-a') }));
    expect(await until(() => b.active === 2)).toBe(true);
    // Were sk-a's requests tenant-a, a keyless request would be another tenant, under its share.
    const keyless = await infer(port, { hold: 1 });
    expect(keyless.status).toBe(429);
    expect(JSON.parse(keyless.body).error).toBe('admission_tenant_share');
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    expect((await infer(port, { hold: 1, headers: bearer('sk-wrong') })).status).toBe(401);
    expect(await tenantOf(port, 4)).toEqual([null, null, null, null]);
    await expectSettled(p);
  });

  test("the rule's tenant_claim names the claim; the process default stays for other rules", async () => {
    const token = signHs256({ sub: 'by-sub', org: 'by-org', exp: exp() }, secret);
    const own = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b], {
        api_key_auth: { mode: 'jwt', tenant_claim: 'org' },
      }),
    );
    const dflt = await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b], { api_key_auth: 'jwt' }),
    );
    expect((await infer(own, { hold: 1, headers: bearer(token) })).status).toBe(200);
    expect((await infer(dflt, { hold: 1, headers: bearer(token) })).status).toBe(200);
    expect(await tenantOf(own, 1)).toEqual(['by-org']);
    expect(await tenantOf(dflt, 1)).toEqual(['by-sub']);
    const noOrg = signHs256({ sub: 'by-sub', exp: exp() }, secret);
    const r = await infer(own, { hold: 1, headers: bearer(noOrg) });
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).error.message).toBe('token has no org claim');
  });

  test('a tenant_claim that cannot be honoured is 400 and nothing is stored', async () => {
    const before = ((await admin(p.adminPort, 'GET', `${LB}/all`)).json as { lbAttr: unknown[] }).lbAttr
      .length;
    for (const auth of [
      { mode: 'required', tenant_claim: 'org' },
      { mode: 'optional', tenant_claim: 'org' },
      { mode: 'disabled', tenant_claim: 'org' },
      { mode: 'jwt', tenant_claim: '' },
    ]) {
      const res = await admin(
        p.adminPort,
        'POST',
        LB,
        rule(await freePort(), {}, [b], { api_key_auth: auth }),
      );
      expect(res.status, JSON.stringify(auth)).toBe(400);
      expect(res.json).toMatchObject({
        error: 'SLUICE_E_FIELD_VALUE',
        field: 'serviceArguments.api_key_auth.tenant_claim',
      });
    }
    expect(
      ((await admin(p.adminPort, 'GET', `${LB}/all`)).json as { lbAttr: unknown[] }).lbAttr,
    ).toHaveLength(before);
    // A proxy with no JWT key cannot read any claim.
    const q = await startProxy({ credentials: { apiKeys: new Map([['sk-a', 'tenant-a']]) } });
    try {
      const res = await admin(
        q.adminPort,
        'POST',
        LB,
        rule(await freePort(), {}, [b], { api_key_auth: { mode: 'apikey-or-jwt', tenant_claim: 'org' } }),
      );
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        error: 'SLUICE_E_FIELD_VALUE',
        field: 'serviceArguments.api_key_auth.tenant_claim',
      });
      expect(((await admin(q.adminPort, 'GET', `${LB}/all`)).json as { lbAttr: unknown[] }).lbAttr).toEqual(
        [],
      );
    } finally {
      await q.close();
    }
  });

  test('secondaryIPs, which this proxy cannot serve, is refused 400 rather than stored and ignored; read-only endpoint status round-trips', async () => {
    for (const secondaryIPs of [[{ secondaryIP: '127.0.0.2' }], 'x', null]) {
      const res = await admin(p.adminPort, 'POST', LB, {
        ...rule(await freePort(), {}, [b]),
        secondaryIPs,
      });
      expect(res.status, JSON.stringify(secondaryIPs)).toBe(400);
      expect(res.json).toMatchObject({ error: 'SLUICE_E_FIELD_VALUE', field: 'secondaryIPs' });
    }
    const port = await freePort();
    const r = { ...rule(port, {}, [b]), secondaryIPs: [] };
    // loxilb's read-only endpoint status (state, counter) round-trips from its GET, as fc_effective does.
    r.endpoints[0] = { ...r.endpoints[0], state: 'active', counter: '0:0' };
    expect((await admin(p.adminPort, 'POST', LB, r)).status).toBe(200);
    expect(
      (await admin(p.adminPort, 'DELETE', `${LB}/externalipaddress/127.0.0.1/port/${port}/protocol/tcp`))
        .status,
    ).toBe(200);
  });
});
