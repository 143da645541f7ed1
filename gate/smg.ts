/**
 * The SMG dialect: the same gate core configured from SMG's admission
 * settings, answering with SMG's statuses, codes and headers and exporting
 * its `smg_*` metrics.
 *
 * `--max-concurrent-requests` is the capacity of a token bucket (<= 0 turns
 * admission control off); `--queue-size` waiting requests (default 100, 0 =
 * no queue) wait FIFO, every protocol alike, for at most
 * `--queue-timeout-secs` (default 60) from entry; a positive
 * `--rate-limit-tokens-per-second` refills the bucket over time, so in-flight
 * may pass the cap, and refilled tokens go to the oldest waiter.
 */
import { TokenBucket } from './bucket.js';
import type { Clock } from './clock.js';
import { resolveConfig } from './config.js';
import { type DecisionReason, REASON_INDEX, type Refusal } from './decisions.js';
import { GateError } from './errors.js';
import { MAX_CEILING, MAX_QUEUE_DEPTH, MAX_WINDOW_MS } from './fields.js';
import type { Family } from './metrics.js';
import {
  type AdmissionRequest,
  type Anomalies,
  type Decision,
  type GateHost,
  Pool,
  type Ticket,
} from './pool.js';

/** SMG's admission settings, by their config names. */
export interface SmgSettings {
  /** @default -1 (disabled) */
  max_concurrent_requests?: number;
  /** @default 100 */
  queue_size?: number;
  /** Seconds. @default 60 */
  queue_timeout_secs?: number;
  /** Tokens per second; unset or 0 means no refill. */
  rate_limit_tokens_per_second?: number;
}

/** The settings in force. */
export interface ResolvedSmg {
  maxConcurrentRequests: number;
  queueSize: number;
  queueTimeoutSecs: number;
  rateLimitTokensPerSecond: number;
  enabled: boolean;
}

/** Least `max_concurrent_requests` (SMG's setting is an i32). */
export const SMG_I32_MIN = -2_147_483_648;

const SMG_KEYS = [
  'max_concurrent_requests',
  'queue_size',
  'queue_timeout_secs',
  'rate_limit_tokens_per_second',
];

/** Validates SMG settings strictly; errors name the setting, the value and the bound. */
export function parseSmgSettings(input: unknown, path = 'smg'): ResolvedSmg {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new GateError('SLUICE_E_SMG_SETTING', path, input, 'an object of SMG settings');
  }
  const o = input as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!SMG_KEYS.includes(k))
      throw new GateError('SLUICE_E_FIELD_UNKNOWN', `${path}.${k}`, o[k], SMG_KEYS.join(', '));
  }
  const int = (k: string, dflt: number, lo: number, hi: number): number => {
    const v = o[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
      throw new GateError('SLUICE_E_SMG_SETTING', `${path}.${k}`, v, `an integer from ${lo} to ${hi}`);
    }
    return v;
  };
  // SMG's setting is an i32 where any value <= 0 turns admission control off.
  const maxConcurrentRequests = int('max_concurrent_requests', -1, SMG_I32_MIN, MAX_CEILING);
  const queueSize = int('queue_size', 100, 0, MAX_QUEUE_DEPTH);
  const queueTimeoutSecs = int('queue_timeout_secs', 60, 0, MAX_WINDOW_MS / 1000);
  if (queueSize > 0 && queueTimeoutSecs <= 0) {
    throw new GateError(
      'SLUICE_E_SMG_SETTING',
      `${path}.queue_timeout_secs`,
      queueTimeoutSecs,
      'a value above 0 while queue_size is above 0',
      `${path}.queue_timeout_secs: ${queueTimeoutSecs} must be above 0 while queue_size is ${queueSize}`,
    );
  }
  const rate = o.rate_limit_tokens_per_second ?? 0;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0) {
    throw new GateError(
      'SLUICE_E_SMG_SETTING',
      `${path}.rate_limit_tokens_per_second`,
      rate,
      'a number >= 0',
    );
  }
  return {
    maxConcurrentRequests,
    queueSize,
    queueTimeoutSecs,
    rateLimitTokensPerSecond: rate,
    enabled: maxConcurrentRequests > 0,
  };
}

/** An SMG error response. */
export interface SmgResponse {
  status: 429 | 503;
  code: 'admission_queue_full' | 'admission_queue_timeout';
  headers: Record<string, string>;
  body: { error: { type: string; code: string; message: string; param: null } };
}

/** Retry-After on every SMG admission shed, in seconds. */
export const SMG_RETRY_AFTER_S = 2;

/** Maps a gate refusal to SMG's response. */
export function smgResponse(r: Refusal): SmgResponse {
  const timeout = r.reason === 'queue_timeout' || r.reason === 'drained';
  const status = timeout ? 503 : 429;
  const code = timeout ? 'admission_queue_timeout' : 'admission_queue_full';
  return {
    status,
    code,
    headers: { 'X-SMG-Error-Code': code, 'Retry-After': String(SMG_RETRY_AFTER_S) },
    body: {
      error: {
        type: timeout ? 'Service Unavailable' : 'Too Many Requests',
        code,
        message: timeout ? 'timed out waiting for an admission slot' : 'admission queue is full',
        param: null,
      },
    },
  };
}

/** Period of the SMG pool's sweep (queue timeouts and refill hand-off), in ms. */
export const SMG_SWEEP_MS = 100;

export interface SmgGateOptions {
  clock: Clock;
  host?: GateHost;
}

/** The SMG-shaped admission limiter over the gate core. */
export class SmgGate {
  readonly settings: ResolvedSmg;
  readonly pool: Pool;
  readonly anomalies: Anomalies = { underflow: 0, unknown_permit: 0, tenant_table_full: 0 };
  readonly #stop: () => void;

  constructor(settings: SmgSettings | ResolvedSmg, o: SmgGateOptions) {
    this.settings = 'enabled' in settings ? settings : parseSmgSettings(settings);
    const s = this.settings;
    const cfg = resolveConfig(
      s.enabled
        ? {
            fc_mode: 'enforce',
            fc_max_outstanding: s.maxConcurrentRequests,
            ...(s.queueSize > 0
              ? { fc_max_queue_depth: s.queueSize, fc_max_queue_wait_ms: s.queueTimeoutSecs * 1000 }
              : {}),
          }
        : { fc_mode: 'off' },
      {},
    );
    this.pool = new Pool(cfg, [], {
      clock: o.clock,
      host: o.host ?? { granted: () => 'taken', ended: () => {} },
      anomalies: this.anomalies,
      draining: () => false,
      everyRequestMayWait: true,
      workersOutsideGate: true,
    });
    if (s.enabled)
      this.pool.bucket = new TokenBucket(s.maxConcurrentRequests, s.rateLimitTokensPerSecond, o.clock.now());
    this.#stop = o.clock.every(SMG_SWEEP_MS, () => this.pool.tick());
  }

  dispose(): void {
    this.#stop();
  }

  /**
   * Decides one request. SMG picks its worker itself, so an admitted permit
   * carries no endpoint; a bypass means admission control does not apply.
   */
  admit(req: Omit<AdmissionRequest, 'preferredEndpoint' | 'pd'>, context?: unknown): Decision {
    return this.pool.admit({ ...req, tenant: undefined }, context);
  }

  cancel(ticket: Ticket): void {
    this.pool.cancel(ticket);
  }

  /** SMG's admission metrics. */
  collect(): Family[] {
    const p = this.pool;
    const n = (r: DecisionReason): number => p.decisions[REASON_INDEX[r]]!;
    return [
      gauge('smg_admission_inflight', 'Requests holding a permit.', p.inflight),
      gauge('smg_admission_queue_depth', 'Requests waiting in the admission queue.', p.queue.length),
      {
        name: 'smg_admission_queue_rejected_total',
        type: 'counter',
        help: 'Queue-full (429) and queue-timeout (503) sheds.',
        samples: [
          { name: 'smg_admission_queue_rejected_total', labels: { reason: 'full' }, value: n('queue_full') },
          {
            name: 'smg_admission_queue_rejected_total',
            labels: { reason: 'timeout' },
            value: n('queue_timeout'),
          },
        ],
      },
      {
        name: 'smg_http_rate_limit_total',
        type: 'counter',
        help: 'Every admission decision.',
        samples: [
          { name: 'smg_http_rate_limit_total', labels: { result: 'allowed' }, value: n('admitted') },
          {
            name: 'smg_http_rate_limit_total',
            labels: { result: 'rejected' },
            value: n('capacity_shed') + n('queue_full') + n('queue_timeout'),
          },
        ],
      },
    ];
  }
}

function gauge(name: string, help: string, value: number): Family {
  return { name, type: 'gauge', help, samples: [{ name, labels: {}, value }] };
}
