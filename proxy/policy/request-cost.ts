/**
 * A request's cost estimate for the policy, from its body, without a tokenizer: prompt tokens as
 * the body's UTF-8 bytes / 4 (about four bytes per token for English BPE vocabularies; the JSON
 * framing is counted too, so it errs high), and max output tokens from the body's `max_tokens`
 * (or `max_completion_tokens`, `max_output_tokens`). A body that names none has no output bound:
 * it is charged {@link UNBOUNDED_OUTPUT_TOKENS}, which the estimator clamps to the class's most
 * seats, so an unbounded request never passes for a small one.
 */

/** Bytes per prompt token of the estimate. */
export const BYTES_PER_TOKEN = 4;
/** Output tokens charged to a body without max_tokens (clamped by the estimator's max_seats). */
export const UNBOUNDED_OUTPUT_TOKENS = 1_000_000;
/** Body fields naming the output bound, first found wins. */
export const MAX_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

/** The estimate and where its output bound came from. */
export interface RequestCost {
  readonly promptTokens: number;
  readonly maxOutputTokens: number;
  /** `body` (a field of the body), `missing` (charged unbounded). */
  readonly maxTokensSource: 'body' | 'missing';
  /** The body's field that carried it, when it came from the body. */
  readonly maxTokensField?: (typeof MAX_TOKEN_FIELDS)[number];
}

/** What reading the body came to: the parsed object, or why it cannot be used. */
export type BodyJson =
  | { readonly ok: true; readonly json: Record<string, unknown> }
  | { readonly ok: false; readonly detail: string };

/** Parses a request body as one JSON object. */
export function parseBody(body: Buffer): BodyJson {
  if (body.length === 0) return { ok: false, detail: 'the body is empty (a JSON object is expected)' };
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return { ok: false, detail: `the body is not JSON (${(e as Error).message})` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: false, detail: 'the body is JSON but not an object' };
  return { ok: true, json: v as Record<string, unknown> };
}

/**
 * The cost of a request whose body is `bytes` long and parsed as `json`.
 * @returns the cost, or a problem naming the field (a max_tokens that is not a whole number >= 0)
 */
export function requestCost(
  bytes: number,
  json: Readonly<Record<string, unknown>>,
): { ok: true; cost: RequestCost } | { ok: false; field: string; detail: string } {
  const promptTokens = Math.ceil(bytes / BYTES_PER_TOKEN);
  for (const f of MAX_TOKEN_FIELDS) {
    const v = json[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      return { ok: false, field: `body.${f}`, detail: `${JSON.stringify(v)} is not a whole number >= 0` };
    return {
      ok: true,
      cost: { promptTokens, maxOutputTokens: v, maxTokensSource: 'body', maxTokensField: f },
    };
  }
  return {
    ok: true,
    cost: { promptTokens, maxOutputTokens: UNBOUNDED_OUTPUT_TOKENS, maxTokensSource: 'missing' },
  };
}

/**
 * The body with its output bound lowered to `maxTokens` (the field it had, or `max_tokens` when
 * it had none); null when nothing needs to change (its own bound is already at most that).
 */
export function capMaxTokens(
  json: Readonly<Record<string, unknown>>,
  cost: RequestCost,
  maxTokens: number,
): Buffer | null {
  if (cost.maxTokensSource === 'body' && cost.maxOutputTokens <= maxTokens) return null;
  const field = cost.maxTokensField ?? 'max_tokens';
  return Buffer.from(JSON.stringify({ ...json, [field]: maxTokens }), 'utf8');
}
