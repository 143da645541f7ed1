/**
 * Which cliff steps can be judged. A step in which the driver fell behind its schedule (more late
 * sends than the lateness bound of loadgen/driver/lag.ts allows) did not offer the load it is
 * labelled with: it is marked invalid in the steps table and drawn as a red cross in a chart of
 * its own ("Invalid steps"), and left out of the report's main chart, findings and table, so no
 * conclusion is drawn from it.
 */
import { LATE_MS, LATE_SENDS_ALLOWED } from '../loadgen/driver/lag.js';
import type { CliffStep } from './cliff.js';

/** "37.3 %". */
const pct = (x: number): string => `${Math.round(x * 1000) / 10} %`;

/** Why a step is invalid, with its numbers and the bound; '' for a valid step. */
export function invalidReason(s: CliffStep): string {
  if (s.valid) return '';
  return `the driver fell behind: ${s.late_sends} of ${s.sends} sends (${pct(s.late_share)}) late by > ${LATE_MS} ms, above the ${pct(s.max_late_share)} bound (${LATE_SENDS_ALLOWED} always allowed); lag p99 ${s.lag_p99_ms} ms, max ${s.lag_max_ms} ms`;
}

/** One note per invalid step, naming its line and rate. */
export function invalidStepNotes(steps: readonly CliffStep[]): string[] {
  return steps
    .filter((s) => !s.valid)
    .map(
      (s) =>
        `INVALID step, left out of the chart, the findings and the table: ${s.line} at ${s.offered_rps} req/s offered (${invalidReason(s)}). Rerun it at a lower --time-scale or on a quieter machine.`,
    );
}

/** True when every step is valid. */
export function allStepsValid(steps: readonly CliffStep[]): boolean {
  return steps.every((s) => s.valid);
}
