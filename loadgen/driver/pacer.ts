/**
 * Real-time pacing of the load driver: a schedule's requests handed out at their send times by
 * one timer set for the next due time; when it fires, every request due by then goes at once
 * (a late timer sends a batch, it never skips or delays the rest), and a per-second timer that
 * closes each second of the run on time.
 */
import type { RequestDescriptor, Schedule } from '../../sim/clients/schedule.js';

/** Milliseconds since the run's time 0 (may be negative before it). */
export type RunClock = () => number;

/** A schedule being paced. */
export interface Pacer {
  /** Settles when the schedule is exhausted or the run stopped. */
  readonly over: Promise<void>;
  /** Clears the pending timer. */
  cancel(): void;
}

/**
 * Hands each request of `schedule` to `due` at its send time (`sentAtMs` on `clock`), until the
 * schedule ends or `stopped()` is true. The first timer is set at once.
 */
export function paceSchedule(
  schedule: Schedule,
  clock: RunClock,
  due: (d: RequestDescriptor) => void,
  stopped: () => boolean,
): Pacer {
  let next = schedule.next();
  let timer: NodeJS.Timeout | undefined;
  let done!: () => void;
  const over = new Promise<void>((r) => {
    done = r;
  });
  const tick = (): void => {
    timer = undefined;
    const now = clock();
    while (next !== undefined && next.sentAtMs <= now) {
      const d = next;
      next = schedule.next();
      due(d);
    }
    if (next === undefined || stopped()) {
      done();
      return;
    }
    timer = setTimeout(tick, Math.max(0, next.sentAtMs - clock()));
  };
  timer = setTimeout(tick, Math.max(0, (next?.sentAtMs ?? 0) - clock()));
  return {
    over,
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** Seconds of a run being closed on time. */
export interface SecondTicker {
  /** Seconds closed so far. */
  readonly closed: number;
  /** Clears the pending timer. */
  cancel(): void;
}

/**
 * Calls `close(sec)` for sec = 1 .. `seconds`, each at `sec` × 1000 ms on `clock` (or at once
 * when that time has passed). The first timer is set at once.
 */
export function tickSeconds(seconds: number, clock: RunClock, close: (sec: number) => void): SecondTicker {
  let sec = 0;
  let timer: NodeJS.Timeout | undefined;
  const closeSecond = (): void => {
    sec++;
    close(sec);
    if (sec < seconds) timer = setTimeout(closeSecond, Math.max(0, (sec + 1) * 1000 - clock()));
  };
  timer = setTimeout(closeSecond, Math.max(0, 1000 - clock()));
  return {
    get closed() {
      return sec;
    },
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
