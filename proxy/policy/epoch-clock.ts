/**
 * The policy's clock in the proxy: epoch milliseconds (`performance.timeOrigin + performance.now()`:
 * monotonic within the process), so the deadlines and times a deferred item carries in the defer
 * store still mean the same instant after a restart. Timers are the proxy's real ones; the policy
 * runs at time scale 1 whatever `timeScale` the rule gates use.
 */
import { RealClock } from '../clock.js';

export class EpochClock extends RealClock {
  constructor() {
    super(1);
  }
  /** Epoch ms, monotonic within the process. */
  override now(): number {
    return performance.timeOrigin + performance.now();
  }
}
