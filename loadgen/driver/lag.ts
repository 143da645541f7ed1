/**
 * How well the driver kept its schedule: each send's lag behind its scheduled time.
 */
import { LatencyHistogram, round3 } from '../../sim/run/histogram.js';

/** Sends later than this count as late, ms. */
export const LATE_MS = 10;

/** Lag figures of a run (ms). */
export interface ScheduleReport {
  /** Attempts sent (originals and retries). */
  sends: number;
  /** Sends more than {@link LATE_MS} behind their scheduled time. */
  late_sends: number;
  lag_p50_ms: number;
  lag_p99_ms: number;
  lag_max_ms: number;
  lag_mean_ms: number;
  /** True when no send was late. */
  kept_schedule: boolean;
}

/** Accumulates send lags. */
export class LagMeter {
  readonly #h = new LatencyHistogram();
  #late = 0;

  add(lagMs: number): void {
    const v = Math.max(0, lagMs);
    this.#h.add(v);
    if (v > LATE_MS) this.#late++;
  }

  report(): ScheduleReport {
    const h = this.#h;
    const z = (x: number) => (Number.isFinite(x) ? round3(x) : 0);
    return {
      sends: h.count,
      late_sends: this.#late,
      lag_p50_ms: z(h.quantile(0.5)),
      lag_p99_ms: z(h.quantile(0.99)),
      lag_max_ms: z(h.max),
      lag_mean_ms: z(h.mean),
      kept_schedule: this.#late === 0,
    };
  }
}
