/**
 * Client retry policies as pure decision functions: given the attempt that just failed and what the
 * response said, the delay before the next attempt (ms) or undefined to give up. Retries of a request
 * keep its logical id (see `RequestFactory.retry`), so amplification = attempts / logical requests.
 */
import { ClientConfigError, requireInteger, requireNonNegative } from './errors.js';
import type { RandomFn } from './rng.js';

/** What the client knows when an attempt fails. */
export interface RetryContext {
  /** The attempt that just failed, 1-based (1 = the original request). */
  attempt: number;
  /** HTTP status of the response; 0 for a connection error or client-side timeout (no response). */
  status: number;
  /** `Retry-After` header, seconds; undefined when absent. */
  retryAfterSec?: number;
  /** `jitter_hint_ms` of the refusal body (capacity gate 429s); undefined when absent. */
  jitterHintMs?: number;
}

/** A retry decision: delay in ms before the next attempt, or undefined for "give up". */
export type RetryPolicy = (ctx: RetryContext, rng: RandomFn) => number | undefined;

/** Never retry. */
export interface NoRetryConfig {
  kind: 'none';
}

/**
 * Honour the gate: wait `Retry-After` plus a uniform jitter in [0, jitter_hint_ms) (as the capacity gate
 * asks its clients to), or, without a Retry-After, `fallbackDelayMs` plus the same jitter.
 */
export interface HonourRetryConfig {
  kind: 'honour';
  /** Retries after the original attempt. Default 5. */
  maxRetries?: number;
  /** Delay when the response has no Retry-After, ms. Default 1000. */
  fallbackDelayMs?: number;
}

/**
 * The Stainless-generated OpenAI and Anthropic SDKs (openai-python / anthropic-sdk-python
 * `_base_client._calculate_retry_timeout`): `max_retries` 2; retry on no response, 408, 409, 429 and
 * >= 500; a Retry-After of 0 < v <= 60 s is slept exactly, otherwise min(0.5 s · 2^n, 8 s) · (1 − 0.25·U)
 * with n the retries already made.
 */
export interface SdkRetryConfig {
  kind: 'sdk';
  /** Default 2, the SDKs' `max_retries`. */
  maxRetries?: number;
  /** Default 500, the SDKs' `INITIAL_RETRY_DELAY` (0.5 s). */
  initialDelayMs?: number;
  /** Default 8000, the SDKs' `MAX_RETRY_DELAY` (8 s). */
  maxDelayMs?: number;
  /** Largest Retry-After slept as given, s. Default 60. */
  maxRetryAfterSec?: number;
}

/** Retry at once, ignoring Retry-After: the impatient client. */
export interface NaiveRetryConfig {
  kind: 'naive';
  /** Retries after the original attempt. Default 3. */
  maxRetries?: number;
}

/**
 * Everyone retries after the same delay, without jitter: the thundering herd. With
 * `honourRetryAfter`, the delay is the Retry-After itself when present (a fixed Retry-After herd).
 */
export interface SynchronisedRetryConfig {
  kind: 'synchronised';
  /** Delay before every retry, ms. Default 1000. */
  delayMs?: number;
  /** Retries after the original attempt. Default 3. */
  maxRetries?: number;
  /** Use the Retry-After (exactly) when the response has one. Default false. */
  honourRetryAfter?: boolean;
}

/** A plain retry config, as found in a scenario file. */
export type RetryConfig =
  | NoRetryConfig
  | HonourRetryConfig
  | SdkRetryConfig
  | NaiveRetryConfig
  | SynchronisedRetryConfig;

/** Statuses the SDKs retry: 408, 409, 429, >= 500, and 0 (no response). */
export function isRetryableStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Builds a retry policy from a plain config. The policy draws from the RNG only when it jitters.
 * @throws ClientConfigError when a parameter is out of range.
 */
export function createRetryPolicy(config: RetryConfig, field = 'retry'): RetryPolicy {
  switch (config.kind) {
    case 'none':
      return () => undefined;
    case 'honour': {
      const maxRetries = requireInteger(`${field}.maxRetries`, config.maxRetries ?? 5, 0);
      const fallbackMs = requireNonNegative(`${field}.fallbackDelayMs`, config.fallbackDelayMs ?? 1000);
      return (ctx, rng) => {
        if (!canRetry(ctx, maxRetries)) return undefined;
        const baseMs = ctx.retryAfterSec === undefined ? fallbackMs : Math.max(0, ctx.retryAfterSec) * 1000;
        const hint = ctx.jitterHintMs ?? 0;
        return hint > 0 ? baseMs + rng() * hint : baseMs;
      };
    }
    case 'sdk': {
      const maxRetries = requireInteger(`${field}.maxRetries`, config.maxRetries ?? 2, 0);
      const initialMs = requireNonNegative(`${field}.initialDelayMs`, config.initialDelayMs ?? 500);
      const capMs = requireNonNegative(`${field}.maxDelayMs`, config.maxDelayMs ?? 8000);
      const maxRetryAfterSec = requireNonNegative(`${field}.maxRetryAfterSec`, config.maxRetryAfterSec ?? 60);
      return (ctx, rng) => {
        if (!canRetry(ctx, maxRetries)) return undefined;
        const ra = ctx.retryAfterSec;
        if (ra !== undefined && ra > 0 && ra <= maxRetryAfterSec) return ra * 1000;
        const retriesTaken = ctx.attempt - 1;
        return Math.min(initialMs * 2 ** retriesTaken, capMs) * (1 - 0.25 * rng());
      };
    }
    case 'naive': {
      const maxRetries = requireInteger(`${field}.maxRetries`, config.maxRetries ?? 3, 0);
      return (ctx) => (canRetry(ctx, maxRetries) ? 0 : undefined);
    }
    case 'synchronised': {
      const maxRetries = requireInteger(`${field}.maxRetries`, config.maxRetries ?? 3, 0);
      const delayMs = requireNonNegative(`${field}.delayMs`, config.delayMs ?? 1000);
      const honour = config.honourRetryAfter ?? false;
      return (ctx) => {
        if (!canRetry(ctx, maxRetries)) return undefined;
        return honour && ctx.retryAfterSec !== undefined ? Math.max(0, ctx.retryAfterSec) * 1000 : delayMs;
      };
    }
    default:
      throw new ClientConfigError(
        `${field}.kind`,
        (config as { kind: unknown }).kind,
        'none, honour, sdk, naive or synchronised',
      );
  }
}

function canRetry(ctx: RetryContext, maxRetries: number): boolean {
  return isRetryableStatus(ctx.status) && ctx.attempt >= 1 && ctx.attempt <= maxRetries;
}
