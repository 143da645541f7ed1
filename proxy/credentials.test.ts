import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { signHs256 } from '../loadgen/driver/jwt-sign.js';
import { authenticate, type CredentialOptions, loadApiKeys, loadJwtKeys } from './credentials.js';
import { verifyJwt } from './jwt.js';

const secret = Buffer.from('s3cret');
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

function signRs256(claims: Record<string, unknown>): string {
  const h = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const s = sign('RSA-SHA256', Buffer.from(`${h}.${p}`), privateKey).toString('base64url');
  return `${h}.${p}.${s}`;
}

describe('JWT verification', () => {
  const now = 1_800_000_000;
  test('HS256 and RS256 verify; tampering, wrong key, alg none and alg confusion do not', async () => {
    expect(
      await verifyJwt(signHs256({ sub: 'a', exp: now + 60 }, secret), { hsSecret: secret }, now),
    ).toEqual({
      ok: true,
      claims: { sub: 'a', exp: now + 60 },
    });
    expect(
      await verifyJwt(signRs256({ sub: 'b', exp: now + 60 }), { rsPublicKey: publicKey }, now),
    ).toMatchObject({
      ok: true,
    });
    const t = signHs256({ sub: 'a' }, secret);
    const [h, , s] = t.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin' })).toString('base64url')}.${s}`;
    expect(await verifyJwt(forged, { hsSecret: secret }, now)).toEqual({ ok: false, why: 'signature' });
    expect(await verifyJwt(signHs256({ sub: 'a' }, 'other'), { hsSecret: secret }, now)).toEqual({
      ok: false,
      why: 'signature',
    });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"a"}').toString('base64url')}.`;
    expect(await verifyJwt(none, { hsSecret: secret }, now)).toEqual({ ok: false, why: 'alg' });
    // An RS256-keyed verifier never accepts HS256, even signed with the public key's PEM.
    const pem = publicKey.export({ type: 'spki', format: 'pem' });
    expect(await verifyJwt(signHs256({ sub: 'a' }, pem), { rsPublicKey: publicKey }, now)).toEqual({
      ok: false,
      why: 'alg',
    });
    expect(await verifyJwt('abc', { hsSecret: secret }, now)).toEqual({ ok: false, why: 'malformed' });
  });

  test('exp and nbf are checked, with the leeway', async () => {
    const k = { hsSecret: secret };
    expect(await verifyJwt(signHs256({ exp: now - 1 }, secret), k, now)).toEqual({
      ok: false,
      why: 'expired',
    });
    expect(await verifyJwt(signHs256({ exp: now + 1 }, secret), k, now)).toMatchObject({ ok: true });
    expect(await verifyJwt(signHs256({ nbf: now + 10, exp: now + 60 }, secret), k, now)).toEqual({
      ok: false,
      why: 'not_yet_valid',
    });
    expect(
      await verifyJwt(signHs256({ nbf: now + 10, exp: now + 60 }, secret), { ...k, leewayS: 30 }, now),
    ).toMatchObject({
      ok: true,
    });
    expect(await verifyJwt(signHs256({ exp: 'soon' }, secret), k, now)).toEqual({
      ok: false,
      why: 'malformed',
    });
  });
});

describe('JWT claims', () => {
  const now = 1_800_000_000;
  const k = { hsSecret: secret, audience: 'sluice', issuer: 'https://idp.example' };
  const good = { sub: 'a', exp: now + 60, aud: 'sluice', iss: 'https://idp.example' };
  const v = (claims: Record<string, unknown>, keys: Parameters<typeof verifyJwt>[1] = k) =>
    verifyJwt(signHs256(claims, secret), keys, now);

  test('the configured audience and issuer are checked; unset, they are not', async () => {
    expect(await v(good)).toMatchObject({ ok: true });
    expect(await v({ ...good, aud: ['other', 'sluice'] })).toMatchObject({ ok: true });
    expect(await v({ ...good, aud: 'other' })).toEqual({ ok: false, why: 'audience' });
    expect(await v({ sub: 'a', exp: now + 60, iss: good.iss })).toEqual({ ok: false, why: 'audience' });
    expect(await v({ ...good, iss: 'https://evil.example' })).toEqual({ ok: false, why: 'issuer' });
    expect(await v({ sub: 'a', exp: now + 60, aud: 'sluice' })).toEqual({ ok: false, why: 'issuer' });
    expect(await v({ sub: 'a', exp: now + 60, aud: 'x', iss: 'y' }, { hsSecret: secret })).toMatchObject({
      ok: true,
    });
  });

  test('a token without exp is refused unless allowed', async () => {
    expect(await v({ sub: 'a' }, { hsSecret: secret })).toEqual({ ok: false, why: 'no_exp' });
    expect(await v({ sub: 'a' }, { hsSecret: secret, allowNoExp: true })).toMatchObject({ ok: true });
    expect(await v({ sub: 'a', exp: 'soon' }, { hsSecret: secret, allowNoExp: true })).toEqual({
      ok: false,
      why: 'malformed',
    });
  });

  test('loadJwtKeys carries the claim checks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-claims-'));
    writeFileSync(join(dir, 's'), 's3cret');
    expect(
      loadJwtKeys({ secretFile: join(dir, 's'), audience: 'a', issuer: 'i', allowNoExp: true }),
    ).toMatchObject({ audience: 'a', issuer: 'i', allowNoExp: true });
  });
});

describe('api_key_auth policies', () => {
  const o: CredentialOptions = {
    apiKeys: new Map([['sk-a', 'tenant-a']]),
    jwt: { hsSecret: secret },
    tenantClaim: 'org',
  };
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const jwt = signHs256({ org: 'tenant-j', exp: Date.now() / 1000 + 60 }, secret);

  test('disabled ignores credentials; a tenant never comes from a free header', async () => {
    expect(await authenticate('disabled', { ...bearer('sk-a'), 'x-tenant-id': 'evil' }, o)).toEqual({
      ok: true,
      tenant: undefined,
    });
    expect(await authenticate('optional', { 'x-tenant-id': 'evil' }, o)).toEqual({
      ok: true,
      tenant: undefined,
    });
  });

  test('required wants a known API key (Bearer or x-api-key)', async () => {
    expect(await authenticate('required', bearer('sk-a'), o)).toEqual({ ok: true, tenant: 'tenant-a' });
    expect(await authenticate('required', { 'x-api-key': 'sk-a' }, o)).toEqual({
      ok: true,
      tenant: 'tenant-a',
    });
    expect(await authenticate('required', bearer('sk-b'), o)).toMatchObject({ ok: false });
    expect(await authenticate('required', {}, o)).toMatchObject({ ok: false });
    expect(await authenticate('required', bearer(jwt), o)).toMatchObject({ ok: false });
  });

  test('jwt wants a valid token with the tenant claim', async () => {
    // The verified claims come along (the --policy envelope reads them), exactly as signed.
    expect(await authenticate('jwt', bearer(jwt), o)).toEqual({
      ok: true,
      tenant: 'tenant-j',
      claims: { org: 'tenant-j', exp: expect.any(Number) },
    });
    expect(await authenticate('jwt', bearer('sk-a'), o)).toMatchObject({ ok: false });
    expect(await authenticate('jwt', bearer(signHs256({ sub: 'x' }, secret)), o)).toMatchObject({
      ok: false,
    });
  });

  test('apikey-or-jwt takes either; optional checks what is sent', async () => {
    expect(await authenticate('apikey-or-jwt', bearer(jwt), o)).toEqual({
      ok: true,
      tenant: 'tenant-j',
      claims: { org: 'tenant-j', exp: expect.any(Number) },
    });
    expect(await authenticate('apikey-or-jwt', bearer('sk-a'), o)).toEqual({ ok: true, tenant: 'tenant-a' });
    expect(await authenticate('optional', bearer('sk-zzz'), o)).toMatchObject({ ok: false });
  });
});

describe('credential files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-creds-'));
  test('the key file maps keys to tenants; a bad one names the file', async () => {
    const f = join(dir, 'keys.json');
    writeFileSync(f, JSON.stringify({ keys: { 'sk-1': 't1' } }));
    expect(loadApiKeys(f)).toEqual(new Map([['sk-1', 't1']]));
    writeFileSync(f, JSON.stringify({ keys: { 'sk-1': 3 } }));
    expect(() => loadApiKeys(f)).toThrow(/keys\.sk-1/);
    writeFileSync(f, '{');
    expect(() => loadApiKeys(f)).toThrow(/--api-keys/);
  });

  test('JWT keys load from a secret file and a PEM public key', async () => {
    const sf = join(dir, 'secret');
    const pf = join(dir, 'pub.pem');
    writeFileSync(sf, 's3cret\n');
    writeFileSync(pf, publicKey.export({ type: 'spki', format: 'pem' }));
    const k = loadJwtKeys({ secretFile: sf, publicKeyFile: pf, leewayS: 2 });
    const exp = Math.floor(Date.now() / 1000) + 60;
    expect(await verifyJwt(signHs256({ sub: 'a', exp }, 's3cret'), k)).toMatchObject({ ok: true });
    expect(await verifyJwt(signRs256({ sub: 'b', exp }), k)).toMatchObject({ ok: true });
  });
});
