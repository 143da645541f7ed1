/**
 * The state one emulator instance shares between its HTTP handlers: the engine host, the
 * served model, the faults in force and the counters behind `stats()`.
 */
import type { VllmMetricsVersion } from '../../sim/engine/exposition.js';
import type { Rng } from '../../sim/kernel/rng.js';
import type { Faults } from './faults.js';
import type { HostedRequest, RealClockEngineHost } from './host.js';

/** Counters of the HTTP layer since start. */
export interface HttpCounters {
  /** Inference requests received (valid or not). */
  requests: number;
  /** Inference requests answered 4xx before reaching the engine (bad input, too long). */
  invalid: number;
  /** Inference requests answered with an injected error. */
  injectedErrors: number;
  /** Responses completed with every token. */
  completed: number;
  /** Clients that went away before their response completed (engine request aborted). */
  disconnected: number;
  /** Responses that stalled (the stall fault). */
  stalled: number;
}

/** Counters and gauges of a running emulator (`stats()`, `GET /admin/stats`). */
export interface EmulatorStats extends Readonly<HttpCounters> {
  /** Inference responses open now. */
  readonly active: number;
  /** Engine RUNNING and WAITING now. */
  readonly running: number;
  readonly waiting: number;
  /** Tokens delivered, engine steps run, engine requests aborted. */
  readonly tokens: number;
  readonly steps: number;
  readonly aborted: number;
  /** Mean and max lateness of engine steps, engine ms: how far the host lags its timer. */
  readonly lagMsMean: number;
  readonly lagMsMax: number;
}

/** What the handlers of one emulator share. */
export interface EmulatorContext {
  readonly host: RealClockEngineHost<HostedRequest>;
  /** Served model name. */
  readonly modelName: string;
  /** Longest prompt + output accepted, tokens. */
  readonly maxModelLen: number;
  /** Output length when a request sets neither `max_tokens` nor `max_completion_tokens`. */
  readonly defaultMaxTokens: number;
  readonly metricsVersion: VllmMetricsVersion;
  /** Draws for `error_rate` (one per inference request). */
  readonly errorRng: Rng;
  /** Server start, Unix s (`created` of `/v1/models`). */
  readonly startedAtS: number;
  faults: Faults;
  readonly counters: HttpCounters;
  /** Open inference responses by request id, with the function that abandons each. */
  readonly active: Map<string, () => void>;
  /** A fresh request id (unique in this process). */
  nextId(): string;
}
