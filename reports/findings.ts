/**
 * The recommendation sections: what a run summary says in words (where
 * goodput was lost, which bound bound), a sweep's recommended rule, and a
 * cliff test's verdict on each mode.
 */
import type { RunSummary } from '../sim/run/records.js';
import { MODE_LABELS } from './charts/cliff.js';
import { counts, num, params, pct, rps } from './format.js';
import {
  CLIFF_MODES,
  type CliffPoint,
  type CodeSection,
  type Section,
  type SweepData,
  type TextSection,
} from './types.js';

/** Plain-language findings from a run summary, most important first. */
export function runFindings(s: RunSummary): string[] {
  const out: string[] = [];
  if (!s.conservation_ok) {
    out.push('Conservation failed: attempts do not add up to the outcomes. The figures below are suspect.');
  }
  const notGood = s.throughput_rps - s.goodput_rps;
  if (s.throughput_rps > 0 && notGood > 0.005 * s.throughput_rps) {
    out.push(
      `${rps(notGood)} of completions (${pct(notGood / s.throughput_rps)} of throughput) finished but were not good: late for their TTFT SLO or deadline. That capacity was spent on work nobody could use.`,
    );
  }
  if (s.shed_rate > 0) {
    const refusals = counts(s.sheds);
    out.push(`The gate refused ${pct(s.shed_rate)} of attempts (${refusals}).`);
  }
  const ceiling = s.ceilings.max_outstanding;
  if (ceiling > 0 && s.max_inflight >= ceiling) {
    out.push(`In-flight requests reached the ceiling (${num(ceiling)}): the ceiling bound during the run.`);
  }
  const depth = s.ceilings.queue_depth;
  if (depth > 0 && s.max_queued >= depth) {
    out.push(`The queue filled to its depth (${num(depth)}); later arrivals were refused while it was full.`);
  }
  const timeouts = s.decisions.queue_timeout ?? 0;
  if (timeouts > 0) {
    out.push(
      `${num(timeouts)} requests waited the whole queue window (${num(s.ceilings.queue_wait_ms)} ms) and were refused: the queue is holding work it cannot start in time.`,
    );
  }
  if (s.tenants.length > 1 && s.jain_fairness < 0.9) {
    const worst = [...s.tenants].sort((a, b) => a.good_share - b.good_share)[0];
    if (worst) {
      out.push(
        `Fairness is low (Jain's index ${num(s.jain_fairness, 3)}); tenant "${worst.tenant}" had only ${pct(worst.good_share)} of its requests good.`,
      );
    }
  }
  if (s.retry_amplification > 1.2) {
    out.push(`Retries amplified load ${num(s.retry_amplification, 2)}× (attempts per logical request).`);
  }
  if (s.wasted_tokens > 0) {
    out.push(`${num(s.wasted_tokens)} tokens were generated after their client had left.`);
  }
  const anomalies = counts(s.anomalies);
  if (anomalies !== 'none') out.push(`Anomalies: ${anomalies}.`);
  if (out.length === 0) out.push('Every offered request was good; nothing was refused.');
  return out;
}

/** The findings as a report section. */
export function runFindingsSection(s: RunSummary): TextSection {
  return { kind: 'text', title: 'Findings', bullets: runFindings(s) };
}

/** The sweep's recommendation: verdict, the rule to apply, SMG flags and policy fields. */
export function sweepRecommendationSections(data: SweepData): Section[] {
  const r = data.recommendation;
  const bullets: string[] = [];
  if (r.params) bullets.push(`Recommended point: ${params(r.params, data.varied)}.`);
  if (!r.feasible) {
    bullets.push(
      `No point meets every SLO${r.binding ? `; the binding constraint is ${r.binding}` : ''}. Relax an SLO, widen the ranges, or add capacity.`,
    );
  }
  bullets.push(`SLOs: ${data.slo.length > 0 ? data.slo.join(', ') : 'none given'}.`);
  if (data.seeds !== undefined) bullets.push(`Seeds per point: ${data.seeds}.`);
  bullets.push(...(r.notes ?? []));
  const out: Section[] = [{ kind: 'text', title: 'Recommendation', paragraphs: [r.headline], bullets }];
  if (r.rule !== undefined) {
    const rule: CodeSection = {
      kind: 'code',
      title: 'Rule to apply',
      language: 'json',
      text: JSON.stringify(r.rule, null, 2),
      caption: 'The serviceArguments of the recommended point.',
    };
    out.push(rule);
  }
  if (r.flags && r.flags.length > 0) {
    out.push({ kind: 'code', title: 'SMG flags', language: 'text', text: r.flags.join(' \\\n  ') });
  }
  if (r.policy !== undefined) {
    out.push({
      kind: 'code',
      title: 'Policy to apply',
      language: 'text',
      text: Object.entries(r.policy.set)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
      caption: `The policy fields of the recommended point, to set in ${r.policy.file}.`,
    });
  }
  return out;
}

/** The share of its peak goodput a line keeps at its highest load to count as a plateau. */
export const PLATEAU_KEEPS = 0.9;

/** What the cliff test shows, per mode: the best goodput and what it keeps at the highest load (90% or more: a plateau). */
export function cliffFindings(points: readonly CliffPoint[]): string[] {
  const out: string[] = [];
  for (const mode of CLIFF_MODES) {
    const line = points.filter((p) => p.mode === mode).sort((a, b) => a.offered_rps - b.offered_rps);
    const last = line.at(-1);
    if (!last) continue;
    const peak = line.reduce((m, p) => (p.goodput_rps > m.goodput_rps ? p : m), last);
    const kept = peak.goodput_rps > 0 ? last.goodput_rps / peak.goodput_rps : 1;
    const plateau = kept >= PLATEAU_KEEPS;
    const verdict = plateau ? 'plateaus: it holds at' : 'collapses: it falls to';
    const bound = `${plateau ? 'at least' : 'below'} the ${pct(PLATEAU_KEEPS, 0)} a plateau keeps`;
    out.push(
      `${MODE_LABELS[mode]}: goodput peaks at ${rps(peak.goodput_rps)} (offered ${rps(peak.offered_rps)}) and ${verdict} ${rps(last.goodput_rps)} at ${rps(last.offered_rps)} offered (${pct(kept, 0)} of the peak, ${bound}; shed rate ${pct(last.shed_rate)}).`,
    );
  }
  return out;
}
