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

/**
 * The lateness bound: a run (or a cliff step) with more than this share of its sends late by more
 * than {@link LATE_MS} did not offer the load it claims, so its figures are not judged. 1 %: a
 * driver that keeps up is late on a handful of sends (a GC pause, a timer batch); one that cannot
 * keep up is late on most of them (a saturated cliff step sent 745 of its requests late). Up to
 * {@link LATE_SENDS_ALLOWED} late sends are allowed on any run.
 */
export const MAX_LATE_SHARE = 0.01;

/** Late sends always allowed, whatever the share: one GC pause or timer batch on a short run. */
export const LATE_SENDS_ALLOWED = 5;

/** Whether a run kept to its schedule closely enough to be judged. */
export interface Lateness {
  sends: number;
  late_sends: number;
  /** late_sends / sends (0 without sends), rounded to 4 places. */
  late_share: number;
  lag_p99_ms: number;
  /** The bound it was held to ({@link MAX_LATE_SHARE} unless configured). */
  max_late_share: number;
  /** late_sends <= max(LATE_SENDS_ALLOWED, max_late_share * sends). */
  valid: boolean;
}

/** Holds a schedule report to the lateness bound. */
export function lateness(
  r: Pick<ScheduleReport, 'sends' | 'late_sends' | 'lag_p99_ms'>,
  maxLateShare: number = MAX_LATE_SHARE,
): Lateness {
  const share = r.sends === 0 ? 0 : Math.round((r.late_sends / r.sends) * 10_000) / 10_000;
  return {
    sends: r.sends,
    late_sends: r.late_sends,
    late_share: share,
    lag_p99_ms: r.lag_p99_ms,
    max_late_share: maxLateShare,
    valid: r.late_sends <= Math.max(LATE_SENDS_ALLOWED, maxLateShare * r.sends),
  };
}

const pctText = (x: number): string => `${Math.round(x * 1000) / 10} %`;

/** "745 of 2000 sends (37.3 %) late by > 10 ms (lag p99 412 ms), above the 1 % bound". */
export function latenessText(l: Lateness): string {
  return `${l.late_sends} of ${l.sends} sends (${pctText(l.late_share)}) late by > ${LATE_MS} ms (lag p99 ${l.lag_p99_ms} ms), ${l.valid ? 'within' : 'above'} the ${pctText(l.max_late_share)} bound`;
}
