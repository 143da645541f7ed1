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

/**
 * Routes SMG names as bypassing its admission control: health, model listing, admin and worker
 * management (SGLang Model Gateway docs, "Admin and Health Endpoints" and "Worker Management
 * APIs": https://docs.sglang.ai/advanced_features/sgl_model_gateway.html). Matching is exact and
 * case-sensitive; `/workers/{id}` and `/wasm/{uuid}` match one segment after the prefix.
 */
export const SMG_BYPASS_PATHS: readonly string[] = [
  '/liveness',
  '/readiness',
  '/health',
  '/health_generate',
  '/engine_metrics',
  '/v1/models',
  '/get_model_info',
  '/server_info',
  '/get_server_info',
  '/flush_cache',
  '/get_loads',
  '/metrics',
  '/workers',
  '/wasm',
];

const SMG_BYPASS_ONE_SEGMENT = /^\/(?:workers|wasm)\/[^/%\\]+$/;

/**
 * True when `path` bypasses SMG's admission control. The safe rule: only the routes SMG names
 * bypass; an unknown route, a case variant (`/V1/chat/completions`) or an encoded slash is gated
 * as inference, since a worker may still serve it.
 */
export function isSmgBypassPath(path: string): boolean {
  const p = normalisePath(path);
  return SMG_BYPASS_PATHS.includes(p) || SMG_BYPASS_ONE_SEGMENT.test(p);
}

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
