/**
 * Response bodies in the OpenAI / vLLM shapes: SSE chunks for streams and the JSON object for
 * non-streaming responses. Token text is filler (a fixed word cycle), one word per token.
 *
 * Stream sequence (chat): a role chunk (`delta: {role: "assistant", content: ""}`) sent with the
 * first token, one content chunk per token with `finish_reason` on the last one (as vLLM does),
 * the usage chunk (`choices: []`) when `stream_options.include_usage` is set, then `[DONE]`.
 * With include_usage every other chunk carries `usage: null`. Completions streams have no role
 * chunk; their chunks carry `text`.
 */
import type { InferenceApi } from './openai.js';

const WORDS = [
  ' The',
  ' quick',
  ' brown',
  ' fox',
  ' jumps',
  ' over',
  ' the',
  ' lazy',
  ' dog',
  ' and',
  ' then',
  ' runs',
  ' far',
  ' away',
  ' again',
  '.',
];

/** The filler text of output token `index` (0-based). */
export function tokenText(index: number): string {
  return WORDS[index % WORDS.length] as string;
}

/** The filler text of `n` tokens. */
export function outputText(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += tokenText(i);
  return s;
}

/** Token counts of a completed request. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** Builds a usage object. */
export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** The `data: [DONE]` event that ends every stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** Renders the bodies of one response. */
export class ResponseRenderer {
  readonly #api: InferenceApi;
  readonly #id: string;
  readonly #created: number;
  readonly #model: string;
  readonly #includeUsage: boolean;

  /**
   * @param id response id (`chatcmpl-…` / `cmpl-…`)
   * @param created Unix time, s
   */
  constructor(api: InferenceApi, id: string, created: number, model: string, includeUsage: boolean) {
    this.#api = api;
    this.#id = id;
    this.#created = created;
    this.#model = model;
    this.#includeUsage = includeUsage;
  }

  /** The role chunk (chat only; null for completions). */
  roleEvent(): string | null {
    if (this.#api !== 'chat') return null;
    return this.#event([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
    ]);
  }

  /** The chunk of output token `index` (0-based); `finish` is set on the last one. */
  tokenEvent(index: number, finish: 'stop' | 'length' | null): string {
    const text = tokenText(index);
    const stop = finish === null ? {} : { stop_reason: null };
    if (this.#api === 'chat') {
      return this.#event([
        { index: 0, delta: { content: text }, logprobs: null, finish_reason: finish, ...stop },
      ]);
    }
    return this.#event([{ index: 0, text, logprobs: null, finish_reason: finish, ...stop }]);
  }

  /** The usage chunk (`choices: []`). */
  usageEvent(usage: Usage): string {
    return `data: ${JSON.stringify({ ...this.#head(), choices: [], usage })}\n\n`;
  }

  /** The non-streaming response object. */
  full(tokens: number, finish: 'stop' | 'length', usage: Usage): Record<string, unknown> {
    const text = outputText(tokens);
    const choice =
      this.#api === 'chat'
        ? { index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: finish }
        : { index: 0, text, logprobs: null, finish_reason: finish };
    return {
      id: this.#id,
      object: this.#api === 'chat' ? 'chat.completion' : 'text_completion',
      created: this.#created,
      model: this.#model,
      choices: [{ ...choice, stop_reason: null }],
      usage,
    };
  }

  #head(): Record<string, unknown> {
    return {
      id: this.#id,
      object: this.#api === 'chat' ? 'chat.completion.chunk' : 'text_completion',
      created: this.#created,
      model: this.#model,
    };
  }

  #event(choices: unknown[]): string {
    const usage = this.#includeUsage ? { usage: null } : {};
    return `data: ${JSON.stringify({ ...this.#head(), choices, ...usage })}\n\n`;
  }
}
