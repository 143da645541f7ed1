/**
 * JWT verification with `jose` (panva/jose): HS256 (shared secret) and RS256
 * (RSA public key). The algorithm must match a configured key (no `none`, no
 * HS/RS confusion); `exp` and `nbf` are checked against the wall clock with
 * a leeway; a token without `exp` is refused unless allowed; the audience
 * and issuer are checked when configured. Verification is asynchronous
 * (WebCrypto); every failure resolves to a short reason, never a rejection.
 * Tokens are signed on the client side, `loadgen/driver/jwt-sign.ts`.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { errors, type JWTHeaderParameters, type JWTVerifyOptions, jwtVerify } from 'jose';

/** Keys and checks a JWT is verified with; at least one key must be set. */
export interface JwtKeys {
  /** HS256 shared secret. */
  hsSecret?: Buffer;
  /** RS256 public key. */
  rsPublicKey?: KeyObject;
  /** Clock-skew allowance on exp/nbf, in seconds. @default 0 */
  leewayS?: number;
  /** When set, the token's `aud` must contain it. */
  audience?: string;
  /** When set, the token's `iss` must equal it. */
  issuer?: string;
  /** Accept tokens without `exp` (they never expire). @default false */
  allowNoExp?: boolean;
}

/** Why a token was refused. */
export type JwtFailure =
  | 'malformed'
  | 'alg'
  | 'signature'
  | 'expired'
  | 'not_yet_valid'
  | 'no_exp'
  | 'audience'
  | 'issuer';

export type JwtResult = { ok: true; claims: Record<string, unknown> } | { ok: false; why: JwtFailure };

/** Loads a PEM public key (or certificate) as a KeyObject. */
export function publicKeyFromPem(pem: string | Buffer): KeyObject {
  return createPublicKey(pem);
}

/** True when `token` has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

class NoKey extends Error {}

function failure(err: unknown): JwtFailure {
  if (err instanceof NoKey || err instanceof errors.JOSEAlgNotAllowed) return 'alg';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'exp' && err.reason === 'missing') return 'no_exp';
    if (err.claim === 'nbf' && err.reason === 'check_failed') return 'not_yet_valid';
    if (err.claim === 'aud') return 'audience';
    if (err.claim === 'iss') return 'issuer';
  }
  return 'malformed';
}

/**
 * Verifies a compact JWS.
 * @param nowS current wall-clock time in seconds since the epoch
 */
export async function verifyJwt(
  token: string,
  keys: JwtKeys,
  nowS: number = Date.now() / 1000,
): Promise<JwtResult> {
  if (!looksLikeJwt(token)) return { ok: false, why: 'malformed' };
  const algorithms: string[] = [];
  if (keys.hsSecret !== undefined) algorithms.push('HS256');
  if (keys.rsPublicKey !== undefined) algorithms.push('RS256');
  const opts: JWTVerifyOptions = {
    algorithms,
    clockTolerance: keys.leewayS ?? 0,
    currentDate: new Date(nowS * 1000),
    ...(keys.allowNoExp === true ? {} : { requiredClaims: ['exp'] }),
    ...(keys.audience === undefined ? {} : { audience: keys.audience }),
    ...(keys.issuer === undefined ? {} : { issuer: keys.issuer }),
  };
  const keyFor = (h: JWTHeaderParameters): Uint8Array | KeyObject => {
    if (h.alg === 'HS256' && keys.hsSecret !== undefined) return new Uint8Array(keys.hsSecret);
    if (h.alg === 'RS256' && keys.rsPublicKey !== undefined) return keys.rsPublicKey;
    throw new NoKey();
  };
  try {
    const { payload } = await jwtVerify(token, keyFor, opts);
    return { ok: true, claims: payload as Record<string, unknown> };
  } catch (err) {
    return { ok: false, why: failure(err) };
  }
}
