/**
 * Which paths of a loxilb rule service are gated and which need the rule's
 * credential, decided on the normalised path (`request-target.ts`). The
 * safe rule: only paths known not to be inference bypass the ceilings, and
 * only health probes go without a credential. Everything else (inference
 * routes, unknown paths, `/V1/...`, an encoded slash) is gated as inference
 * and needs the credential, since the backend may still route it to a
 * model. Matching is exact and case-sensitive, so a case variant is never
 * a bypass, and a model id with an escape or a backslash is gated too.
 */
import { normalisePath } from '../gate/index.js';

/** Health probes: bypass the ceilings and need no credential. */
export const PROBE_PATHS: readonly string[] = ['/health', '/healthz', '/ready', '/readyz', '/livez', '/ping'];

/** Known non-inference routes that are not probes: bypass the ceilings, need the credential. */
export const LISTING_PATHS: readonly string[] = ['/v1/models', '/metrics', '/version'];

/** How a path is treated: gated inference, an ungated listing, or an ungated keyless probe. */
export type RouteClass = 'inference' | 'listing' | 'probe';

/** The class of a normalised path (query string and trailing slashes are ignored). */
export function routeClass(path: string): RouteClass {
  const p = normalisePath(path);
  if (PROBE_PATHS.includes(p)) return 'probe';
  if (LISTING_PATHS.includes(p) || /^\/v1\/models\/[^/%\\]+$/.test(p)) return 'listing';
  return 'inference';
}

/** True when the path is gated as an inference call. */
export function isGatedPath(path: string): boolean {
  return routeClass(path) === 'inference';
}

/** True when the path needs the rule's credential (everything but a probe). */
export function needsCredential(path: string): boolean {
  return routeClass(path) !== 'probe';
}
