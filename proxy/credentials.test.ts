import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { authenticate, type CredentialOptions, loadApiKeys, loadJwtKeys } from './credentials.js';
import { signHs256, verifyJwt } from './jwt.js';

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
  test('HS256 and RS256 verify; tampering, wrong key, alg none and alg confusion do not', () => {
    expect(verifyJwt(signHs256({ sub: 'a' }, secret), { hsSecret: secret }, now)).toEqual({
      ok: true,
      claims: { sub: 'a' },
    });
    expect(verifyJwt(signRs256({ sub: 'b' }), { rsPublicKey: publicKey }, now).ok).toBe(true);
    const t = signHs256({ sub: 'a' }, secret);
    const [h, , s] = t.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin' })).toString('base64url')}.${s}`;
    expect(verifyJwt(forged, { hsSecret: secret }, now)).toEqual({ ok: false, why: 'signature' });
    expect(verifyJwt(signHs256({ sub: 'a' }, 'other'), { hsSecret: secret }, now)).toEqual({
      ok: false,
      why: 'signature',
    });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"a"}').toString('base64url')}.`;
    expect(verifyJwt(none, { hsSecret: secret }, now)).toEqual({ ok: false, why: 'alg' });
    // An RS256-keyed verifier never accepts HS256, even signed with the public key's PEM.
    const pem = publicKey.export({ type: 'spki', format: 'pem' });
    expect(verifyJwt(signHs256({ sub: 'a' }, pem), { rsPublicKey: publicKey }, now)).toEqual({
      ok: false,
      why: 'alg',
    });
    expect(verifyJwt('abc', { hsSecret: secret }, now)).toEqual({ ok: false, why: 'malformed' });
  });

  test('exp and nbf are checked, with the leeway', () => {
    const k = { hsSecret: secret };
    expect(verifyJwt(signHs256({ exp: now - 1 }, secret), k, now)).toEqual({ ok: false, why: 'expired' });
    expect(verifyJwt(signHs256({ exp: now + 1 }, secret), k, now).ok).toBe(true);
    expect(verifyJwt(signHs256({ nbf: now + 10 }, secret), k, now)).toEqual({
      ok: false,
      why: 'not_yet_valid',
    });
    expect(verifyJwt(signHs256({ nbf: now + 10 }, secret), { ...k, leewayS: 30 }, now).ok).toBe(true);
    expect(verifyJwt(signHs256({ exp: 'soon' }, secret), k, now)).toEqual({ ok: false, why: 'malformed' });
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

  test('disabled ignores credentials; a tenant never comes from a free header', () => {
    expect(authenticate('disabled', { ...bearer('sk-a'), 'x-tenant-id': 'evil' }, o)).toEqual({
      ok: true,
      tenant: undefined,
    });
    expect(authenticate('optional', { 'x-tenant-id': 'evil' }, o)).toEqual({ ok: true, tenant: undefined });
  });

  test('required wants a known API key (Bearer or x-api-key)', () => {
    expect(authenticate('required', bearer('sk-a'), o)).toEqual({ ok: true, tenant: 'tenant-a' });
    expect(authenticate('required', { 'x-api-key': 'sk-a' }, o)).toEqual({ ok: true, tenant: 'tenant-a' });
    expect(authenticate('required', bearer('sk-b'), o).ok).toBe(false);
    expect(authenticate('required', {}, o).ok).toBe(false);
    expect(authenticate('required', bearer(jwt), o).ok).toBe(false);
  });

  test('jwt wants a valid token with the tenant claim', () => {
    expect(authenticate('jwt', bearer(jwt), o)).toEqual({ ok: true, tenant: 'tenant-j' });
    expect(authenticate('jwt', bearer('sk-a'), o).ok).toBe(false);
    expect(authenticate('jwt', bearer(signHs256({ sub: 'x' }, secret)), o).ok).toBe(false);
  });

  test('apikey-or-jwt takes either; optional checks what is sent', () => {
    expect(authenticate('apikey-or-jwt', bearer(jwt), o)).toEqual({ ok: true, tenant: 'tenant-j' });
    expect(authenticate('apikey-or-jwt', bearer('sk-a'), o)).toEqual({ ok: true, tenant: 'tenant-a' });
    expect(authenticate('optional', bearer('sk-zzz'), o).ok).toBe(false);
  });
});

describe('credential files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-creds-'));
  test('the key file maps keys to tenants; a bad one names the file', () => {
    const f = join(dir, 'keys.json');
    writeFileSync(f, JSON.stringify({ keys: { 'sk-1': 't1' } }));
    expect(loadApiKeys(f)).toEqual(new Map([['sk-1', 't1']]));
    writeFileSync(f, JSON.stringify({ keys: { 'sk-1': 3 } }));
    expect(() => loadApiKeys(f)).toThrow(/keys\.sk-1/);
    writeFileSync(f, '{');
    expect(() => loadApiKeys(f)).toThrow(/--api-keys/);
  });

  test('JWT keys load from a secret file and a PEM public key', () => {
    const sf = join(dir, 'secret');
    const pf = join(dir, 'pub.pem');
    writeFileSync(sf, 's3cret\n');
    writeFileSync(pf, publicKey.export({ type: 'spki', format: 'pem' }));
    const k = loadJwtKeys({ secretFile: sf, publicKeyFile: pf, leewayS: 2 });
    expect(verifyJwt(signHs256({ sub: 'a' }, 's3cret'), k).ok).toBe(true);
    expect(verifyJwt(signRs256({ sub: 'b' }), k).ok).toBe(true);
  });
});
