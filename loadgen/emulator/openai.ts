/**
 * The OpenAI-compatible request bodies the emulator reads (`/v1/chat/completions`,
 * `/v1/completions`) and the only facts it takes from them: prompt length, output length,
 * streaming. Unknown fields (temperature, top_p, ...) are accepted and ignored, as vLLM does
 * for sampling parameters that do not change timing.
 */
import { ApiError, badField } from './errors.js';

/** Which API a request came in on. */
export type InferenceApi = 'chat' | 'completions';

/** Characters per prompt token in the length estimate. */
export const CHARS_PER_TOKEN = 4;

/** Extension field: the prompt length in tokens, overriding the estimate from the text. */
export const PROMPT_TOKENS_FIELD = 'sluice_prompt_tokens';

/** What the emulator takes from an inference request body. */
export interface InferenceParams {
  readonly api: InferenceApi;
  /** `model`, or null when omitted. */
  readonly model: string | null;
  /** Prompt length, tokens (≥ 1). */
  readonly promptTokens: number;
  /** The field holding the prompt: `messages` or `prompt`. */
  readonly promptField: 'messages' | 'prompt';
  /** `max_completion_tokens` ?? `max_tokens`, or null when neither is set. */
  readonly maxTokens: number | null;
  /** The field `maxTokens` came from. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens' | null;
  readonly stream: boolean;
  /** `stream_options.include_usage`. */
  readonly includeUsage: boolean;
}

type Json = Record<string, unknown>;

/**
 * Parses and checks an inference request body.
 * @throws ApiError 400 naming the field for bad JSON, wrong types or out-of-range values
 */
export function parseInferenceBody(api: InferenceApi, raw: string): InferenceParams {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    throw new ApiError(400, `(body): invalid JSON: ${(err as Error).message}`, 'body');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, '(body): expected a JSON object', 'body');
  }
  const b = body as Json;
  const model = optional(b, 'model', (v) => typeof v === 'string', 'a string') as string | undefined;
  optional(b, 'n', (v) => v === 1, '1 (the emulator serves one choice per request)');
  const stream = (optional(b, 'stream', (v) => typeof v === 'boolean', 'true or false') as boolean) ?? false;
  const includeUsage = streamOptions(b, stream);
  const { maxTokens, maxTokensField } = maxTokensOf(b);
  const promptField = api === 'chat' ? 'messages' : 'prompt';
  const estimated = api === 'chat' ? chatPromptTokens(b.messages) : completionPromptTokens(b.prompt);
  const explicit = optional(b, PROMPT_TOKENS_FIELD, isPositiveInt, 'an integer >= 1') as number | undefined;
  return {
    api,
    model: model ?? null,
    promptTokens: explicit ?? estimated,
    promptField,
    maxTokens,
    maxTokensField,
    stream,
    includeUsage,
  };
}

function isPositiveInt(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 1;
}

/** The value of an optional field (null counts as absent), checked. */
function optional(b: Json, field: string, ok: (v: unknown) => boolean, expected: string): unknown {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (!ok(v)) throw badField(field, v, expected);
  return v;
}

function streamOptions(b: Json, stream: boolean): boolean {
  const so = b.stream_options;
  if (so === undefined || so === null) return false;
  if (typeof so !== 'object' || Array.isArray(so)) throw badField('stream_options', so, 'an object');
  if (!stream) {
    throw new ApiError(400, 'stream_options: can only be set when stream is true', 'stream_options');
  }
  const iu = (so as Json).include_usage;
  if (iu === undefined || iu === null) return false;
  if (typeof iu !== 'boolean') throw badField('stream_options.include_usage', iu, 'true or false');
  return iu;
}

function maxTokensOf(b: Json): Pick<InferenceParams, 'maxTokens' | 'maxTokensField'> {
  const mct = optional(b, 'max_completion_tokens', isPositiveInt, 'an integer >= 1') as number | undefined;
  if (mct !== undefined) return { maxTokens: mct, maxTokensField: 'max_completion_tokens' };
  const mt = optional(b, 'max_tokens', isPositiveInt, 'an integer >= 1') as number | undefined;
  if (mt !== undefined) return { maxTokens: mt, maxTokensField: 'max_tokens' };
  return { maxTokens: null, maxTokensField: null };
}

/** Tokens for a length in characters: ceil(chars / 4), at least 1. */
export function tokensForChars(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

function chatPromptTokens(messages: unknown): number {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw badField('messages', messages, 'a non-empty array of messages');
  }
  let chars = 0;
  messages.forEach((m, i) => {
    const field = `messages[${i}]`;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw badField(field, m, 'an object');
    const msg = m as Json;
    if (typeof msg.role !== 'string') throw badField(`${field}.role`, msg.role, 'a string');
    chars += contentChars(msg.content, `${field}.content`);
  });
  return tokensForChars(chars);
}

function contentChars(content: unknown, field: string): number {
  if (content === undefined || content === null) return 0;
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) throw badField(field, content, 'a string, an array of parts or null');
  let chars = 0;
  content.forEach((part, j) => {
    if (part === null || typeof part !== 'object') throw badField(`${field}[${j}]`, part, 'an object');
    const text = (part as Json).text;
    if (typeof text === 'string') chars += text.length;
  });
  return chars;
}

function completionPromptTokens(prompt: unknown): number {
  if (typeof prompt === 'string') return tokensForChars(prompt.length);
  if (Array.isArray(prompt) && prompt.length > 0) {
    if (prompt.every((t) => Number.isInteger(t) && (t as number) >= 0)) return prompt.length;
    if (prompt.length === 1 && typeof prompt[0] === 'string') return tokensForChars(prompt[0].length);
  }
  throw badField(
    'prompt',
    prompt,
    'a string, a one-element array of strings or a non-empty array of token ids (one prompt per request)',
  );
}
