/**
 * The verdict of a fidelity run: were the targets met, missed, or is the run invalid because the
 * harness could not keep up (the driver fell behind its schedule, or the two runs did not offer
 * the same requests)? An invalid run's targets are not judged: its differences measure the
 * harness, not the simulator. Pure; the CLI maps the status to an exit code.
 */
import { type Lateness, lateness } from '../loadgen/driver/lag.js';

/** Whether a target was met. `met` is false when the relative difference is undefined (the
 * simulated value is 0 and the real one is not: they differ). */
export interface TargetCheck {
  target: number;
  rel_diff: number | null;
  met: boolean;
}

/** Holds a signed relative difference to a ± target. */
export function targetCheck(target: number, relDiff: number | null): TargetCheck {
  return { target, rel_diff: relDiff, met: relDiff !== null && Math.abs(relDiff) <= target };
}

/** met: every target met; missed: a target missed; invalid: the run cannot be judged. */
export type FidelityStatus = 'met' | 'missed' | 'invalid';

/** The verdict and its reasons, one sentence each. */
export interface FidelityVerdict {
  status: FidelityStatus;
  /** The targets missed (judged only on a valid run), e.g. "refusals +17.2 % vs ±5 %". */
  missed: string[];
  /** Why the run is invalid (empty when valid). */
  invalid: string[];
  lateness: Lateness;
}

/** What the verdict reads of a run. */
export interface VerdictInput {
  targets: Record<string, TargetCheck>;
  real_run: { sends: number; late_sends: number; schedule_lag_p99_ms: number };
  schedule_check: { equal: boolean; mismatch_count: number };
}

/** How the targets are named in sentences. */
const LABELS: Record<string, string> = { goodput: 'goodput', sheds: 'refusals', ttft_p95: 'TTFT p95' };

const pct = (d: number | null): string =>
  d === null ? 'undefined (simulated 0, real not)' : `${d >= 0 ? '+' : ''}${(d * 100).toFixed(1)} %`;

/** The verdict of `r`, holding the driver to `maxLateShare` of late sends (default the driver's bound). */
export function fidelityVerdict(r: VerdictInput, o: { maxLateShare?: number } = {}): FidelityVerdict {
  const late = lateness(
    {
      sends: r.real_run.sends,
      late_sends: r.real_run.late_sends,
      lag_p99_ms: r.real_run.schedule_lag_p99_ms,
    },
    o.maxLateShare,
  );
  const invalid: string[] = [];
  if (!late.valid)
    invalid.push(
      `the driver fell behind: ${late.late_sends} of ${late.sends} sends (${(late.late_share * 100).toFixed(1)} %) late, above the ${(late.max_late_share * 100).toFixed(1)} % bound`,
    );
  if (!r.schedule_check.equal)
    invalid.push(
      `the real run did not offer the simulated requests (${r.schedule_check.mismatch_count} differ)`,
    );
  const missed = Object.entries(r.targets)
    .filter(([, c]) => !c.met)
    .map(([name, c]) => `${LABELS[name] ?? name} ${pct(c.rel_diff)} vs ±${c.target * 100} %`);
  const status: FidelityStatus = invalid.length > 0 ? 'invalid' : missed.length > 0 ? 'missed' : 'met';
  return { status, missed: invalid.length > 0 ? [] : missed, invalid, lateness: late };
}

/** One line: "verdict: met", "verdict: MISSED: ...", "verdict: INVALID (targets not judged): ...". */
export function verdictText(v: FidelityVerdict): string {
  if (v.status === 'met') return 'verdict: every target met';
  if (v.status === 'missed') return `verdict: MISSED: ${v.missed.join('; ')}`;
  return `verdict: INVALID, targets not judged: ${v.invalid.join('; ')}`;
}
