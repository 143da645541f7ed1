/**
 * The frontend's delay under load: vLLM's API server process tokenises each new request,
 * and the same process detokenises and streams every running request's output tokens (vLLM
 * V1 moved this work out of the engine core's process because on a fast GPU, Llama-8B on an
 * H100, it had become a bottleneck: "vLLM V1: A Major Upgrade to vLLM's Core Architecture",
 * https://blog.vllm.ai/2025/01/27/v1-alpha-release.html). A new request's own frontend work
 * (`baseMs`) therefore shares that process with the output stream. Modelled as processor
 * sharing, whose mean sojourn time is `baseMs / (1 − ρ)` whatever the service distribution
 * (Kleinrock, "Queueing Systems, Volume 2", M/G/1-PS), with ρ = the share of the process
 * the output stream takes: `perTokenMs` of work for each output token, times the tokens the
 * engine streams per ms now (running sequences over the current step's duration).
 *
 * ρ is held at {@link FRONTEND_RHO_MAX} (a delay of at most 10 × `baseMs`): a saturated
 * frontend slows the stream itself, which the engine model does not feed back.
 */

/** Highest share of the frontend the output stream is taken to use. */
export const FRONTEND_RHO_MAX = 0.9;

/**
 * A request's frontend delay, ms.
 * @param baseMs the delay of an idle frontend, ms
 * @param perTokenMs frontend work per streamed output token, ms; 0 = no load term
 * @param tokensPerMs output tokens the engine streams per ms at the request's arrival
 */
export function frontendDelayMs(baseMs: number, perTokenMs: number, tokensPerMs: number): number {
  if (!(perTokenMs > 0) || !(tokensPerMs > 0)) return baseMs;
  const rho = Math.min(FRONTEND_RHO_MAX, perTokenMs * tokensPerMs);
  return baseMs / (1 - rho);
}
