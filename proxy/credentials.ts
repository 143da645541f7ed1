/**
 * Credentials and tenants: the rule's `api_key_auth` policy decides which
 * credential a request must carry; an API key maps to a tenant id through
 * the key file, a JWT through its tenant claim. A tenant id only ever comes
 * from a verified credential, never from a header the client sets freely.
 *
 * Policies: `disabled` (ignored; keyless), `optional` (a credential, when
 * sent, must be valid, but names no tenant: a service that does not enforce
 * a credential takes no tenant from one), `required` (an API key), `jwt`
 * (a JWT), `apikey-or-jwt` (either). A JWT is verified asynchronously, so
 * `authenticate` answers a promise for one and a plain result otherwise.
 * Credentials are read from `Authorization: Bearer <token>`, or
 * `x-api-key: <key>` for API keys.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type JwtKeys, type JwtResult, looksLikeJwt, publicKeyFromPem, verifyJwt } from './jwt.js';

/** The api_key_auth modes. */
export type AuthPolicy = 'disabled' | 'optional' | 'required' | 'jwt' | 'apikey-or-jwt';

/** Process-wide credential settings. */
export interface CredentialOptions {
  /** API key → tenant id. */
  apiKeys?: ReadonlyMap<string, string>;
  jwt?: JwtKeys;
  /** The claim that names the tenant. @default 'sub' */
  tenantClaim?: string;
}

export type AuthResult =
  | {
      ok: true;
      tenant: string | undefined;
      /** The verified JWT's claims, when a JWT named the tenant (read by `--policy`'s envelope). */
      claims?: Readonly<Record<string, unknown>>;
    }
  | { ok: false; message: string };

/**
 * Reads an API key file: `{"keys": {"sk-...": "tenant-a", ...}}`.
 * @throws Error naming the file and the problem
 */
export function loadApiKeys(file: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`--api-keys ${file}: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) {
    throw new Error(`--api-keys ${file}: expected {"keys": {"<key>": "<tenant>", ...}}`);
  }
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(keys as Record<string, unknown>)) {
    if (typeof v !== 'string' || v === '' || k === '') {
      throw new Error(`--api-keys ${file}: keys.${k} must map a non-empty key to a non-empty tenant id`);
    }
    out.set(k, v);
  }
  return out;
}

/** Builds JWT keys from files: an HS256 secret file and/or an RS256 public key PEM, with the claim checks. */
export function loadJwtKeys(
  o: { secretFile?: string; publicKeyFile?: string } & Omit<JwtKeys, 'hsSecret' | 'rsPublicKey'>,
): JwtKeys {
  const keys: JwtKeys = {
    leewayS: o.leewayS ?? 0,
    ...(o.audience === undefined ? {} : { audience: o.audience }),
    ...(o.issuer === undefined ? {} : { issuer: o.issuer }),
    ...(o.allowNoExp === undefined ? {} : { allowNoExp: o.allowNoExp }),
  };
  if (o.secretFile !== undefined) keys.hsSecret = Buffer.from(readFileSync(o.secretFile, 'utf8').trim());
  if (o.publicKeyFile !== undefined) keys.rsPublicKey = publicKeyFromPem(readFileSync(o.publicKeyFile));
  return keys;
}

/** The policy a rule declares (`api_key_auth` as a string or `{mode}`); absent is disabled. */
export function rulePolicy(base: Readonly<Record<string, unknown>>): AuthPolicy {
  const a = base.api_key_auth;
  const mode = typeof a === 'string' ? a : (a as { mode?: unknown } | undefined)?.mode;
  return typeof mode === 'string' ? (mode as AuthPolicy) : 'disabled';
}

/** The rule's own `api_key_auth.tenant_claim`, if it declares one. */
export function ruleTenantClaim(base: Readonly<Record<string, unknown>>): string | undefined {
  const a = base.api_key_auth;
  const claim =
    typeof a === 'object' && a !== null ? (a as { tenant_claim?: unknown }).tenant_claim : undefined;
  return typeof claim === 'string' ? claim : undefined;
}

/** The bearer token or x-api-key of a request, or null. */
export function credentialOf(headers: Readonly<Record<string, string | string[] | undefined>>): {
  token: string;
  apiKeyHeader: boolean;
} | null {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return { token: m[1]!, apiKeyHeader: false };
  }
  const k = headers['x-api-key'];
  if (typeof k === 'string' && k !== '') return { token: k.trim(), apiKeyHeader: true };
  return null;
}

function tenantOfClaims(policy: AuthPolicy, r: JwtResult, o: CredentialOptions): AuthResult {
  if (!r.ok) return { ok: false, message: `invalid token (${r.why})` };
  if (policy === 'optional') return { ok: true, tenant: undefined };
  const name = o.tenantClaim ?? 'sub';
  const claim = r.claims[name];
  if (typeof claim === 'string' && claim !== '') return { ok: true, tenant: claim, claims: r.claims };
  if (typeof claim === 'number') return { ok: true, tenant: String(claim), claims: r.claims };
  return { ok: false, message: `token has no ${name} claim` };
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Each key file's keys by SHA-256 digest, built once per map. */
const digestIndex = new WeakMap<
  ReadonlyMap<string, string>,
  Map<string, { digest: Buffer; tenant: string }>
>();

/**
 * The tenant of an API key, found by the key's SHA-256 digest and confirmed
 * with `timingSafeEqual`: the time taken depends on the digest only, never
 * on how many leading characters of a real key the guess shares.
 */
function lookupKey(keys: ReadonlyMap<string, string>, token: string): string | undefined {
  let index = digestIndex.get(keys);
  if (index === undefined) {
    index = new Map();
    for (const [k, tenant] of keys) {
      const digest = sha256(k);
      index.set(digest.toString('hex'), { digest, tenant });
    }
    digestIndex.set(keys, index);
  }
  const got = sha256(token);
  const hit = index.get(got.toString('hex'));
  return hit !== undefined && timingSafeEqual(hit.digest, got) ? hit.tenant : undefined;
}

/**
 * Why this process cannot honour a rule's credential settings, or null: a
 * `tenant_claim` needs a JWT key to read claims from.
 */
export function unhonouredAuth(
  base: Readonly<Record<string, unknown>>,
  o: CredentialOptions,
): { field: string; message: string } | null {
  const claim = ruleTenantClaim(base);
  if (claim !== undefined && o.jwt === undefined) {
    const field = 'serviceArguments.api_key_auth.tenant_claim';
    return {
      field,
      message: `${field}: ${JSON.stringify(claim)} cannot be honoured: no JWT key is configured (--jwt-secret-file or --jwt-public-key-file)`,
    };
  }
  return null;
}

/** Resolves a request's tenant under `policy`, or says why it is unauthorized. */
export function authenticate(
  policy: AuthPolicy,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  o: CredentialOptions,
  nowS: number = Date.now() / 1000,
): AuthResult | Promise<AuthResult> {
  if (policy === 'disabled') return { ok: true, tenant: undefined };
  const cred = credentialOf(headers);
  if (cred === null) {
    return policy === 'optional'
      ? { ok: true, tenant: undefined }
      : { ok: false, message: 'missing credential' };
  }
  const asJwt = !cred.apiKeyHeader && looksLikeJwt(cred.token);
  const allowKey = policy === 'required' || policy === 'apikey-or-jwt' || policy === 'optional';
  const allowJwt = policy === 'jwt' || policy === 'apikey-or-jwt' || policy === 'optional';
  if (asJwt && allowJwt) {
    if (o.jwt === undefined) return { ok: false, message: 'no JWT key configured' };
    return verifyJwt(cred.token, o.jwt, nowS).then((r) => tenantOfClaims(policy, r, o));
  }
  if (allowKey && !asJwt) {
    const tenant = o.apiKeys === undefined ? undefined : lookupKey(o.apiKeys, cred.token);
    if (tenant === undefined) return { ok: false, message: 'unknown API key' };
    return { ok: true, tenant: policy === 'optional' ? undefined : tenant };
  }
  return { ok: false, message: policy === 'jwt' ? 'a JWT is required' : 'an API key is required' };
}
