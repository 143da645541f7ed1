/**
 * The client side of a JWT credential: an HS256 compact JWS (RFC 7515/7519) signed with a shared
 * secret. It lives with the load generator, which sends credentials; the proxy only verifies them
 * (proxy/jwt.ts, with `jose`), and its tests sign their tokens with this function too, so the
 * tokens the driver sends are the ones the proxy's tests prove it accepts.
 */
import { createHmac } from 'node:crypto';

/** Signs `claims` as an HS256 token with `secret` (the bytes of the proxy's `--jwt-secret-file`). */
export function signHs256(claims: Record<string, unknown>, secret: Buffer | string): string {
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const s = createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
  return `${h}.${p}.${s}`;
}
