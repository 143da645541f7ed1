/**
 * The error body OpenAI's API answers with,
 * `{"error": {"message", "type", "param", "code"}}`, so OpenAI clients show
 * the reason; `code` carries Sluice's stable code.
 */

/** OpenAI's error object. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** An OpenAI-shaped error body with a stable `code`. */
export function openAiError(
  message: string,
  type: string,
  code: string,
  param: string | null = null,
): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}
