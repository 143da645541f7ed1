/**
 * Errors in the shape vLLM's OpenAI-compatible server sends (vLLM ≥ 0.10 `ErrorResponse`):
 * `{"error": {"message", "type", "param", "code"}}` with `code` the HTTP status.
 */

/** vLLM's error `type` for a status. */
export function errorTypeFor(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequestError';
    case 401:
      return 'AuthenticationError';
    case 403:
      return 'PermissionDeniedError';
    case 404:
      return 'NotFoundError';
    case 405:
      return 'MethodNotAllowedError';
    case 408:
      return 'RequestTimeoutError';
    case 413:
      return 'RequestEntityTooLargeError';
    case 422:
      return 'UnprocessableEntityError';
    case 429:
      return 'RateLimitError';
    case 503:
      return 'ServiceUnavailableError';
    default:
      return status >= 500 ? 'InternalServerError' : 'BadRequestError';
  }
}

/** An error answered to the client: HTTP status and the OpenAI-shaped body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /** The request field at fault, or null. */
  readonly param: string | null;

  constructor(status: number, message: string, param: string | null = null) {
    super(message);
    this.status = status;
    this.param = param;
  }

  /** The JSON body. */
  body(): { error: { message: string; type: string; param: string | null; code: number } } {
    return {
      error: { message: this.message, type: errorTypeFor(this.status), param: this.param, code: this.status },
    };
  }
}

/** A 400 naming the field, the value and what was expected. */
export function badField(field: string, value: unknown, expected: string): ApiError {
  const shown = value === undefined ? 'missing' : `${truncate(JSON.stringify(value))} is not ${expected}`;
  return new ApiError(
    400,
    value === undefined ? `${field}: missing; expected ${expected}` : `${field}: ${shown}`,
    field,
  );
}

function truncate(s: string | undefined, max = 80): string {
  const t = s ?? 'undefined';
  return t.length > max ? `${t.slice(0, max)}…` : t;
}
