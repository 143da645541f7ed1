/**
 * The prefill leg of a P/D (disaggregated) request, as vLLM's disaggregated
 * proxy does it: the request is sent to a prefill endpoint with
 * `max_tokens: 1` and no streaming, its answer awaited (its
 * `kv_transfer_params`, when present, are handed to the decode request), and
 * the decode leg then carries the original request.
 */
import type { Dispatcher } from 'undici';
import type { BackendPools, Target } from './backend-pools.js';
import { jsonDepthExceeds } from './json-bounds.js';

/** What the prefill leg produced. */
export type PrefillResult =
  | { ok: true; kvTransferParams: unknown }
  | { ok: false; why: 'status' | 'error' | 'aborted'; status?: number };

/** The request body sent to the prefill endpoint. */
export function prefillBody(original: Record<string, unknown>): Record<string, unknown> {
  const b: Record<string, unknown> = { ...original, max_tokens: 1, stream: false };
  if ('max_completion_tokens' in b) b.max_completion_tokens = 1;
  delete b.stream_options;
  b.kv_transfer_params = { do_remote_decode: true, do_remote_prefill: false };
  return b;
}

/** The decode request body: the original, with the prefill's KV transfer parameters. */
export function decodeBody(original: Record<string, unknown>, kv: unknown): Buffer {
  return Buffer.from(JSON.stringify(kv === undefined ? original : { ...original, kv_transfer_params: kv }));
}

/**
 * Runs the prefill request.
 * @param signal aborts the leg (the client went away)
 * @param maxJsonDepth an answer nested deeper is taken as carrying no KV transfer parameters
 */
export async function runPrefill(
  target: Target,
  path: string,
  body: Record<string, unknown>,
  pools: BackendPools,
  signal: AbortSignal,
  maxJsonDepth: number,
): Promise<PrefillResult> {
  const payload = JSON.stringify(prefillBody(body));
  let res: Dispatcher.ResponseData;
  try {
    res = await pools.get(target).request({
      path,
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
  } catch {
    return { ok: false, why: signal.aborted ? 'aborted' : 'error' };
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch {
    return { ok: false, why: signal.aborted ? 'aborted' : 'error' };
  }
  const status = res.statusCode;
  if (status < 200 || status >= 300) return { ok: false, why: 'status', status };
  let kv: unknown;
  try {
    kv = jsonDepthExceeds(Buffer.from(text), maxJsonDepth)
      ? undefined
      : (JSON.parse(text) as { kv_transfer_params?: unknown }).kv_transfer_params;
  } catch {
    kv = undefined;
  }
  return { ok: true, kvTransferParams: kv ?? undefined };
}
