/**
 * SMG's HTTP-layer families: `smg_http_responses_total{status_code,error_code}`
 * (a counter of finished responses, `error_code` being the `X-SMG-Error-Code`
 * the gateway answered, or "" when none) and
 * `smg_http_inflight_request_age_count{gt,le}` (a gauge histogram of how long
 * the requests in flight, streams included, have been running: non-cumulative
 * `(gt, le]` buckets in whole seconds, the last one `le="+Inf"`).
 */
import type { Family, Sample } from '../gate/index.js';

/** SMG's in-flight age bucket bounds, in seconds. */
export const INFLIGHT_AGE_BOUNDS_S: readonly number[] = [
  30, 60, 180, 300, 600, 1200, 3600, 7200, 14400, 28800, 86400,
];

const RESPONSES = 'smg_http_responses_total';
const AGES = 'smg_http_inflight_request_age_count';

/** The bucket of an age in whole seconds: the first bound it does not exceed, else the last (+Inf). */
export function ageBucket(ageS: number): number {
  for (let i = 0; i < INFLIGHT_AGE_BOUNDS_S.length; i++) if (ageS <= INFLIGHT_AGE_BOUNDS_S[i]!) return i;
  return INFLIGHT_AGE_BOUNDS_S.length;
}

/** Something that closes once (a response). */
export interface Closable {
  once(event: 'close', fn: () => void): unknown;
}

export class SmgHttpMetrics {
  /** Responses by `status_code\0error_code`. */
  readonly #responses = new Map<string, number>();
  /** Start times (clock ms) of the requests in flight. */
  readonly #inflight = new Map<Closable, number>();

  /** A request started at `nowMs`; it is in flight until `res` closes. */
  track(res: Closable, nowMs: number): void {
    this.#inflight.set(res, nowMs);
    res.once('close', () => this.#inflight.delete(res));
  }

  /** A response went out with `status` (0: none, not counted) and its error code (null: none). */
  response(status: number, errorCode: string | null): void {
    if (status <= 0) return;
    const k = `${status}\u0000${errorCode ?? ''}`;
    this.#responses.set(k, (this.#responses.get(k) ?? 0) + 1);
  }

  get inflight(): number {
    return this.#inflight.size;
  }

  collect(nowMs: number): Family[] {
    const counts = new Array<number>(INFLIGHT_AGE_BOUNDS_S.length + 1).fill(0);
    for (const start of this.#inflight.values()) counts[ageBucket(Math.floor((nowMs - start) / 1000))]!++;
    const ages: Sample[] = counts.map((value, i) => ({
      name: AGES,
      labels: {
        gt: i === 0 ? '0' : String(INFLIGHT_AGE_BOUNDS_S[i - 1]),
        le: i < INFLIGHT_AGE_BOUNDS_S.length ? String(INFLIGHT_AGE_BOUNDS_S[i]) : '+Inf',
      },
      value,
    }));
    const responses: Sample[] = [...this.#responses.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, value]) => {
        const [status_code, error_code] = k.split('\u0000') as [string, string];
        return { name: RESPONSES, labels: { status_code, error_code }, value };
      });
    return [
      {
        name: RESPONSES,
        type: 'counter',
        help: 'Total HTTP responses by status_code and error_code.',
        samples: responses,
      },
      {
        name: AGES,
        type: 'gauge',
        help: 'In-flight HTTP requests per age bucket (gt < age <= le seconds, non-cumulative).',
        samples: ages,
      },
    ];
  }
}
