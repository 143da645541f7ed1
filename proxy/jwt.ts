/**
 * JWT verification with node:crypto: HS256 (shared secret) and RS256 (RSA
 * public key), `exp` and `nbf` checked against the wall clock with a leeway.
 * The algorithm must match the key type configured (no `none`, no HS/RS
 * confusion).
 */
import { createHmac, createPublicKey, type KeyObject, timingSafeEqual, verify } from 'node:crypto';

/** Keys a JWT may be verified with; at least one must be set. */
export interface JwtKeys {
  /** HS256 shared secret. */
  hsSecret?: Buffer;
  /** RS256 public key (PEM or KeyObject). */
  rsPublicKey?: KeyObject;
  /** Clock-skew allowance on exp/nbf, in seconds. @default 0 */
  leewayS?: number;
}

/** Why a token was refused. */
export type JwtFailure = 'malformed' | 'alg' | 'signature' | 'expired' | 'not_yet_valid';

export type JwtResult = { ok: true; claims: Record<string, unknown> } | { ok: false; why: JwtFailure };

/** Loads a PEM public key (or certificate) as a KeyObject. */
export function publicKeyFromPem(pem: string | Buffer): KeyObject {
  return createPublicKey(pem);
}

/** True when `token` has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

function b64json(part: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies a compact JWS.
 * @param nowS current wall-clock time in seconds since the epoch
 */
export function verifyJwt(token: string, keys: JwtKeys, nowS: number = Date.now() / 1000): JwtResult {
  if (!looksLikeJwt(token)) return { ok: false, why: 'malformed' };
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = b64json(h);
  const claims = b64json(p);
  if (header === null || claims === null) return { ok: false, why: 'malformed' };
  const signed = Buffer.from(`${h}.${p}`);
  const sig = Buffer.from(s, 'base64url');
  if (header.alg === 'HS256' && keys.hsSecret !== undefined) {
    const mac = createHmac('sha256', keys.hsSecret).update(signed).digest();
    if (mac.length !== sig.length || !timingSafeEqual(mac, sig)) return { ok: false, why: 'signature' };
  } else if (header.alg === 'RS256' && keys.rsPublicKey !== undefined) {
    let good = false;
    try {
      good = verify('RSA-SHA256', signed, keys.rsPublicKey, sig);
    } catch {
      good = false;
    }
    if (!good) return { ok: false, why: 'signature' };
  } else {
    return { ok: false, why: 'alg' };
  }
  const leeway = keys.leewayS ?? 0;
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number') return { ok: false, why: 'malformed' };
    if (nowS >= claims.exp + leeway) return { ok: false, why: 'expired' };
  }
  if (claims.nbf !== undefined) {
    if (typeof claims.nbf !== 'number') return { ok: false, why: 'malformed' };
    if (nowS + leeway < claims.nbf) return { ok: false, why: 'not_yet_valid' };
  }
  return { ok: true, claims };
}

/** Signs an HS256 token (for tests and tooling). */
export function signHs256(claims: Record<string, unknown>, secret: Buffer | string): string {
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const s = createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
  return `${h}.${p}.${s}`;
}
