/**
 * Hostile input to the management API: prototype names as fields, JSON
 * nested 200,000 deep and a malformed percent-escape in the URL are 400
 * with a stable code, never a 500 and never a stored rule.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import { admin, freePort, rule, startProxy, TestBackend } from '../helpers.js';

let p: LoxiProxy;
let b: TestBackend;
const LB = '/netlox/v1/config/loadbalancer';

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy();
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

const rules = async (): Promise<unknown[]> =>
  ((await admin(p.adminPort, 'GET', `${LB}/all`)).json as { lbAttr: unknown[] }).lbAttr;

describe('admin input', () => {
  test.each(['toString', 'constructor', '__proto__', 'valueOf', 'hasOwnProperty'])(
    'a serviceArguments field named %s is 400 SLUICE_E_FIELD_UNKNOWN and nothing is stored',
    async (name) => {
      const r = rule(await freePort(), { fc_mode: 'enforce' }, [b]);
      // Spliced into the text: an object literal's __proto__ would set the prototype, not a field.
      const text = JSON.stringify(r).replace(
        '"serviceArguments":{',
        `"serviceArguments":{"${name}":{"a":1},`,
      );
      const res = await admin(p.adminPort, 'POST', LB, undefined, { raw: text });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: 'SLUICE_E_FIELD_UNKNOWN', field: `serviceArguments.${name}` });
      expect(await rules()).toEqual([]);
    },
  );

  test('prototype names elsewhere in the rule and the maintenance body are 400', async () => {
    const r = JSON.stringify(rule(await freePort(), { fc_mode: 'enforce' }, [b]));
    for (const text of [
      r.replace('{"serviceArguments"', '{"constructor":1,"serviceArguments"'),
      r.replace('"endpointIP"', '"__proto__":{"x":1},"endpointIP"'),
      r.replace('"fc_mode"', '"api_key_auth":{"mode":"required","toString":1},"fc_mode"'),
      r.replace('"fc_mode"', '"fc_toString":1,"fc_mode"'),
    ]) {
      const res = await admin(p.adminPort, 'POST', LB, undefined, { raw: text });
      expect(res.status, text).toBe(400);
      expect((res.json as { error: string }).error).toBe('SLUICE_E_FIELD_UNKNOWN');
    }
    const m = await admin(p.adminPort, 'PUT', '/netlox/v1/maintenance', undefined, {
      raw: '{"enabled":true,"__proto__":{"enabled":false}}',
    });
    expect(m.status).toBe(400);
    expect(await rules()).toEqual([]);
  });

  test('JSON nested 200,000 deep is 400 SLUICE_E_JSON_DEPTH on both body routes', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    for (const [method, path] of [
      ['POST', LB],
      ['PUT', '/netlox/v1/maintenance'],
    ] as const) {
      const res = await admin(p.adminPort, method, path, undefined, { raw: deep });
      expect(res.status, path).toBe(400);
      expect((res.json as { error: string }).error).toBe('SLUICE_E_JSON_DEPTH');
    }
    const nested = JSON.stringify(rule(await freePort(), { fc_mode: 'enforce' }, [b])).replace(
      '"fc_mode"',
      `"name":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)},"fc_mode"`,
    );
    const res = await admin(p.adminPort, 'POST', LB, undefined, { raw: nested });
    expect(res.status).toBe(400);
    expect(await rules()).toEqual([]);
    // Brackets inside strings are not nesting.
    const inString = rule(await freePort(), { fc_mode: 'enforce' }, [b], { name: '['.repeat(1000) });
    expect((await admin(p.adminPort, 'POST', LB, inString)).status).toBe(200);
    const port = inString.serviceArguments.port as number;
    expect(
      (await admin(p.adminPort, 'DELETE', `${LB}/externalipaddress/127.0.0.1/port/${port}/protocol/tcp`))
        .status,
    ).toBe(200);
  });

  test('a malformed percent-escape in the URL is 400 SLUICE_E_URL', async () => {
    for (const path of [
      `${LB}/externalipaddress/%zz/port/80/protocol/tcp`,
      `${LB}/externalipaddress/%E0%A4%A/port/80/protocol/tcp`,
      `${LB}/all%`,
    ]) {
      const res = await admin(p.adminPort, path.startsWith(`${LB}/all`) ? 'GET' : 'DELETE', path);
      expect(res.status, path).toBe(400);
      expect((res.json as { error: string }).error).toBe('SLUICE_E_URL');
    }
    // A well-formed escape that is not UTF-8 is refused the same way.
    const res = await admin(p.adminPort, 'DELETE', `${LB}/externalipaddress/%C0/port/80/protocol/tcp`);
    expect(res.status).toBe(400);
    expect((res.json as { error: string }).error).toBe('SLUICE_E_URL');
  });
});
