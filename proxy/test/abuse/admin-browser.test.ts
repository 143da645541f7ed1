/**
 * The management API against a browser: a body not declared
 * application/json (415), a cross-origin Origin (403) and a Host that is not
 * the admin listener, as a DNS-rebinding page would send (403), are refused
 * before anything changes; externalIP must be an IP address.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import { admin, freePort, rule, startProxy, TestBackend } from '../helpers.js';
import { rawRequest } from './raw.js';

let p: LoxiProxy;
let b: TestBackend;
const LB = '/netlox/v1/config/loadbalancer';

beforeAll(async () => {
  b = await new TestBackend('b').start();
  p = await startProxy({ adminHostNames: ['gateway.internal'] });
});

afterAll(async () => {
  await p.close();
  await b.stop();
});

const rules = async (): Promise<unknown[]> =>
  ((await admin(p.adminPort, 'GET', `${LB}/all`)).json as { lbAttr: unknown[] }).lbAttr;

/** A raw admin request with the given extra header lines. */
const send = (method: string, path: string, lines: string[], body = '') =>
  rawRequest(p.adminPort, [`${method} ${path} HTTP/1.1`, ...lines].join('\r\n'), body);

describe('admin API from a browser', () => {
  test('a body that is not declared application/json is 415 and nothing is stored', async () => {
    const body = JSON.stringify(rule(await freePort(), { fc_mode: 'enforce' }, [b]));
    const host = `Host: 127.0.0.1:${p.adminPort}`;
    for (const ct of [
      [],
      ['Content-Type: text/plain'],
      ['Content-Type: application/x-www-form-urlencoded'],
    ]) {
      const r = await send('POST', LB, [host, ...ct], body);
      expect(r.status, ct.join()).toBe(415);
      expect(JSON.parse(r.body).error).toBe('SLUICE_E_CONTENT_TYPE');
    }
    const m = await send(
      'PUT',
      '/netlox/v1/maintenance',
      [host, 'Content-Type: text/plain'],
      '{"enabled":true}',
    );
    expect(m.status).toBe(415);
    expect((await admin(p.adminPort, 'GET', '/netlox/v1/maintenance')).json).toMatchObject({
      enabled: false,
    });
    expect(await rules()).toEqual([]);
    const ok = await send('POST', LB, [host, 'Content-Type: Application/JSON; charset=utf-8'], body);
    expect(ok.status).toBe(200);
    expect(await rules()).toHaveLength(1);
    const port = JSON.parse(body).serviceArguments.port as number;
    expect(
      (await admin(p.adminPort, 'DELETE', `${LB}/externalipaddress/127.0.0.1/port/${port}/protocol/tcp`))
        .status,
    ).toBe(200);
  });

  test('a cross-origin Origin is 403 on every route; the same origin and no Origin pass', async () => {
    const host = `127.0.0.1:${p.adminPort}`;
    for (const origin of ['http://evil.example', 'null', `https://${host}`]) {
      const r = await send('GET', `${LB}/all`, [`Host: ${host}`, `Origin: ${origin}`]);
      expect(r.status, origin).toBe(403);
      expect(JSON.parse(r.body).error).toBe('SLUICE_E_ADMIN_ORIGIN');
    }
    const put = await send(
      'PUT',
      '/netlox/v1/maintenance',
      [`Host: ${host}`, 'Origin: http://evil.example', 'Content-Type: application/json'],
      '{"enabled":true}',
    );
    expect(put.status).toBe(403);
    expect((await admin(p.adminPort, 'GET', '/netlox/v1/maintenance')).json).toMatchObject({
      enabled: false,
    });
    expect((await send('GET', `${LB}/all`, [`Host: ${host}`, `Origin: http://${host}`])).status).toBe(200);
  });

  test('a Host that is not the admin listener is 403 (DNS rebinding); its address, localhost and allowed names pass', async () => {
    const port = p.adminPort;
    for (const h of [
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      `10.0.0.1:${port}`,
      '127.0.0.1',
      'a b',
    ]) {
      const r = await send('GET', '/metrics', [`Host: ${h}`]);
      expect(r.status, h).toBe(403);
      expect(JSON.parse(r.body).error).toBe('SLUICE_E_ADMIN_HOST');
    }
    for (const h of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `gateway.internal:${port}`,
    ]) {
      expect((await send('GET', '/metrics', [`Host: ${h}`])).status, h).toBe(200);
    }
  });

  test('externalIP must be an IP address: "" and names are 400 naming the field, nothing is stored', async () => {
    for (const ip of ['', 'localhost', '0', '127.0.0.01', '::1%lo']) {
      const r = rule(await freePort(), { fc_mode: 'enforce' }, [b], { externalIP: ip });
      const res = await admin(p.adminPort, 'POST', LB, r);
      expect(res.status, ip).toBe(400);
      expect(res.json).toMatchObject({ error: 'SLUICE_E_FIELD_VALUE', field: 'serviceArguments.externalIP' });
    }
    expect(await rules()).toEqual([]);
  });
});
