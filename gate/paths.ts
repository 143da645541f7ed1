/**
 * Which request paths are inference calls. Everything else (model listing,
 * health probes, metrics, admin) bypasses the ceilings. Query strings and
 * trailing slashes are normalised; a longer path such as
 * `/v1/chat/completionsx` is not an inference call.
 */

/** Inference routes of the loxilb AI gateway. */
export const INFERENCE_PATHS: readonly string[] = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/embeddings',
];

/** Inference routes of the SMG dialect (its admission control covers these). */
export const SMG_INFERENCE_PATHS: readonly string[] = [...INFERENCE_PATHS, '/generate', '/v1/rerank'];

/** The path without query string, fragment or trailing slashes. */
export function normalisePath(path: string): string {
  let p = path;
  const q = p.search(/[?#]/);
  if (q >= 0) p = p.slice(0, q);
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

/** True when `path` (as sent, query string included) is an inference call on `routes`. */
export function isInferencePath(path: string, routes: readonly string[] = INFERENCE_PATHS): boolean {
  return routes.includes(normalisePath(path));
}
