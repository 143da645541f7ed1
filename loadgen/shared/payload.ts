/**
 * The HTTP request for a scheduled request: an OpenAI chat completion whose `max_tokens` is the
 * request's output tokens (with vLLM's `ignore_eos`, so a real engine generates all of them), a
 * prompt of about the request's prompt tokens, `stream` with `stream_options.include_usage`, and
 * the tenant's API key as a bearer token; `GET /v1/models` for non-inference requests. Pure.
 */

/** The request facts the payload depends on. */
export interface PayloadRequest {
  /** Tenant id (its API key is looked up), or undefined for keyless traffic. */
  tenant: string | undefined;
  promptTokens: number;
  outputTokens: number;
  stream: boolean;
  inference: boolean;
  /** Attempt id, sent as `X-Request-Id`. */
  id?: number | string;
}

/** How payloads are built. */
export interface PayloadOptions {
  /** `model` field; omitted when undefined (vLLM then uses its served model). */
  model?: string;
  /** Send vLLM's `ignore_eos: true` so engines generate exactly max_tokens. Default true. */
  ignoreEos?: boolean;
  /** Also send the exact prompt length as `sluice_prompt_tokens` (understood by `sluice engine`). Default false. */
  exactPromptTokens?: boolean;
}

/** A request ready for any HTTP client. */
export interface HttpRequestSpec {
  method: 'POST' | 'GET' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  /** JSON text, or null for a GET. */
  body: string | null;
}

/** Path of chat completions. */
export const CHAT_PATH = '/v1/chat/completions';
/** Path of the non-inference request. */
export const MODELS_PATH = '/v1/models';

/** The word repeated in prompts: one token in common BPE vocabularies, four characters with its space. */
const PROMPT_WORD = 'cat ';

/**
 * A prompt of about `tokens` tokens: `tokens` repetitions of a one-token word. Its length is
 * `4·tokens − 1` characters, which the emulator (4 characters a token, rounded up) reads as
 * exactly `tokens`; a real tokenizer sees about as many (plus the chat template's few).
 */
export function promptText(tokens: number): string {
  const n = Math.max(1, Math.floor(tokens));
  return PROMPT_WORD.repeat(n).slice(0, -1);
}

/** The `Authorization` header for a tenant, or none when it has no key. */
export function authHeaders(
  tenant: string | undefined,
  apiKeys: Readonly<Record<string, string>>,
): Record<string, string> {
  const key = tenant === undefined ? undefined : apiKeys[tenant];
  return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

/** The HTTP request for `req`. */
export function buildRequest(
  req: PayloadRequest,
  apiKeys: Readonly<Record<string, string>>,
  opts: PayloadOptions = {},
): HttpRequestSpec {
  const headers: Record<string, string> = { ...authHeaders(req.tenant, apiKeys) };
  if (req.id !== undefined) headers['x-request-id'] = String(req.id);
  if (!req.inference) return { method: 'GET', path: MODELS_PATH, headers, body: null };
  const body: Record<string, unknown> = {};
  if (opts.model !== undefined) body.model = opts.model;
  body.messages = [{ role: 'user', content: promptText(req.promptTokens) }];
  body.max_tokens = Math.max(1, Math.floor(req.outputTokens));
  body.stream = req.stream;
  if (req.stream) body.stream_options = { include_usage: true };
  if (opts.ignoreEos ?? true) body.ignore_eos = true;
  if (opts.exactPromptTokens) body.sluice_prompt_tokens = Math.max(1, Math.floor(req.promptTokens));
  headers['content-type'] = 'application/json';
  headers.accept = req.stream ? 'text/event-stream' : 'application/json';
  return { method: 'POST', path: CHAT_PATH, headers, body: JSON.stringify(body) };
}
