/**
 * The seat estimator: a request's cost in seats from its prompt tokens, maximum output tokens and
 * budgeted tool calls (seats per request as in Kubernetes APF's work estimator, with AI inputs).
 */

/** What a request is expected to cost, before it runs. */
export interface CostEstimate {
  readonly promptTokens: number;
  readonly maxOutputTokens: number;
  /** Tool calls budgeted for the request (0 when it uses none). */
  readonly toolCalls?: number;
}

/** The estimator's parameters for one class (the policy's, with the class's overrides). */
export interface EstimatorParams {
  readonly promptTokensPerSeat: number;
  readonly outputTokensPerSeat: number;
  readonly seatsPerToolCall: number;
  readonly minSeats: number;
  readonly maxSeats: number;
}

/**
 * Seats of a request: the sum of its parts (times `factor`, the estimator feedback's correction,
 * 1 without it) rounded up, clamped to [minSeats, maxSeats].
 */
export function estimateSeats(p: EstimatorParams, cost: CostEstimate, factor = 1): number {
  const raw =
    cost.promptTokens / p.promptTokensPerSeat +
    cost.maxOutputTokens / p.outputTokensPerSeat +
    (cost.toolCalls ?? 0) * p.seatsPerToolCall;
  const s = Math.ceil(factor === 1 ? raw : raw * factor);
  return Math.max(p.minSeats, Math.min(s, p.maxSeats));
}

/** Checks a cost estimate from an envelope; returns the first problem, naming the field, or undefined. */
export function costProblem(cost: CostEstimate): string | undefined {
  const check = (name: string, v: number | undefined): string | undefined =>
    v === undefined || (Number.isSafeInteger(v) && v >= 0)
      ? undefined
      : `cost.${name}: ${String(v)} is not a whole number of at least 0`;
  return (
    check('promptTokens', cost.promptTokens) ??
    check('maxOutputTokens', cost.maxOutputTokens) ??
    check('toolCalls', cost.toolCalls)
  );
}
