/**
 * Secrets are compared without revealing them through timing: the admin
 * token and API keys are hashed (SHA-256) and the digests compared with
 * `crypto.timingSafeEqual`, so a guess of any length costs the same
 * comparison. Checked by watching the comparisons, not by timing them.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { authenticate } from '../../credentials.js';
import type { LoxiProxy } from '../../proxy.js';
import { admin, startProxy } from '../helpers.js';

const calls: [number, number][] = [];
vi.mock('node:crypto', async (orig) => {
  const real = await orig<typeof import('node:crypto')>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push([a.byteLength, b.byteLength]);
      return real.timingSafeEqual(a, b);
    },
  };
});

let p: LoxiProxy;
beforeAll(async () => {
  p = await startProxy({ adminToken: 'tok-0123456789' });
});
afterAll(async () => {
  await p.close();
});

describe('secret comparison', () => {
  test('the admin token is compared as equal-length digests, whatever the length sent', async () => {
    for (const guess of ['t', 'tok-0123456789', `tok-0123456789${'x'.repeat(200)}`]) {
      calls.length = 0;
      const r = await admin(p.adminPort, 'GET', '/metrics', undefined, { token: guess });
      expect(r.status, guess).toBe(guess === 'tok-0123456789' ? 200 : 401);
      expect(calls, guess).toEqual([[32, 32]]);
    }
  });

  test('an API key is looked up by its digest and confirmed with timingSafeEqual', () => {
    const apiKeys = new Map([
      ['sk-aaaaaaaa', 'tenant-a'],
      ['sk-bbbbbbbb', 'tenant-b'],
    ]);
    calls.length = 0;
    const ok = authenticate('required', { authorization: 'Bearer sk-bbbbbbbb' }, { apiKeys });
    expect(ok).toEqual({ ok: true, tenant: 'tenant-b' });
    expect(calls).toEqual([[32, 32]]);
    // A guess sharing a prefix with a key is a different digest: refused, never compared byte by byte.
    expect(authenticate('required', { 'x-api-key': 'sk-bbbbbbbX' }, { apiKeys })).toEqual({
      ok: false,
      message: 'unknown API key',
    });
  });
});
