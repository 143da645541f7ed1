/**
 * The run report's class and policy sections: per workload class, the useful on-time
 * completions, the dispositions, the queue age and the reject reasons; and the policy's scorecard
 * totals. Only for runs whose clients carry envelope classes (`summary.classes`).
 */
import type { ClassSummary, FallbackPoolFigures, RunSummary } from '../sim/run/records.js';
import { compareChart, dispositionChart, type LabelledClasses } from './charts/classes.js';
import type { Section, TableSection } from './types.js';

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const ms = (x: number, count: number): string => (count === 0 ? '-' : x.toFixed(0));

/** Per class: offered, completed, useful on time, late, and the queue age. */
export function classTable(classes: readonly ClassSummary[]): TableSection {
  return {
    kind: 'table',
    title: 'Workload classes',
    caption:
      'Useful on time: completed while the client still waited, before the deadline. Late: completed after it (work nobody could use). Queue age: time held in the policy’s class queue (or defer store) by the attempts it queued, ms.',
    columns: [
      'class',
      'offered',
      'completed',
      'useful on time',
      'useful / offered',
      'late',
      'queue age p50',
      'p95',
      'max',
    ],
    rows: classes.map((c) => [
      c.class,
      c.offered,
      c.completed,
      c.useful_on_time,
      pct(c.useful_share),
      c.completed_late,
      ms(c.queue_wait_ms.p50, c.queue_wait_ms.count),
      ms(c.queue_wait_ms.p95, c.queue_wait_ms.count),
      ms(c.queue_wait_ms.max, c.queue_wait_ms.count),
    ]),
  };
}

/** Per class and reason, the rejected attempts. */
export function rejectTable(classes: readonly ClassSummary[]): TableSection {
  const reasons: string[] = [];
  for (const c of classes)
    for (const r of Object.keys(c.reject_reasons)) if (!reasons.includes(r)) reasons.push(r);
  reasons.sort();
  return {
    kind: 'table',
    title: 'Reject reasons',
    caption:
      'Attempts the policy rejected, by its honest reason (tenant_quota, class_capacity, dependency_open, deadline_impossible, queue_full; duplicate_intent and retry_budget for retries of one intent).',
    columns: ['class', ...reasons],
    rows: classes.map((c) => [c.class, ...reasons.map((r) => c.reject_reasons[r] ?? 0)]),
  };
}

/** Per fallback pool of `gate.fallback_pools`: what became of the requests degraded to it. */
export function fallbackPoolTable(pools: Readonly<Record<string, FallbackPoolFigures>>): TableSection {
  return {
    kind: 'table',
    title: 'Fallback pools',
    caption:
      'Requests the policy degraded to each fallback pool (its own engines, past every gate as behind the proxy). Useful on time: completed by the policy deadline with the client still there.',
    columns: [
      'pool',
      'engines',
      'sent',
      'completed',
      'useful on time',
      'failed',
      'cancelled',
      'in system at end',
    ],
    rows: Object.entries(pools).map(([name, f]) => [
      name,
      f.engines,
      f.sent,
      f.completed,
      f.useful_on_time,
      f.failed,
      f.cancelled,
      f.in_system_at_end,
    ]),
  };
}

/** The report sections of a run with classes (none without). */
export function classSections(s: RunSummary): Section[] {
  const classes = s.classes;
  if (classes === undefined || classes.length === 0) return [];
  const out: Section[] = [classTable(classes)];
  if (s.policy !== undefined) {
    out.push({
      kind: 'chart',
      name: 'dispositions',
      title: 'Dispositions per class',
      caption:
        'Each attempt has exactly one disposition: admitted, queued (then dispatched or expired), degraded (a reduced max_tokens or a fallback pool), deferred (202, fed back later by the drain) or rejected.',
      spec: dispositionChart(classes),
    });
    if (classes.some((c) => Object.keys(c.reject_reasons).length > 0)) out.push(rejectTable(classes));
    const pools = s.policy.fallback_pools;
    if (pools !== undefined && Object.keys(pools).length > 0) out.push(fallbackPoolTable(pools));
    out.push({
      kind: 'code',
      title: 'Policy scorecard',
      language: 'json',
      caption: `The gate host's scorecard for ${s.policy.file} (summary.json's policy.scorecard; docs/guide-policy.md says how to read each field).`,
      text: JSON.stringify(s.policy.scorecard, null, 2),
    });
  }
  return out;
}

/** The side-by-side sections of two or more runs (`sluice report DIR --compare OTHER`). */
export function compareSections(runs: readonly { label: string; summary: RunSummary }[]): Section[] {
  const labelled: LabelledClasses[] = runs.map((r) => ({
    label: r.label,
    classes: r.summary.classes ?? [],
    completed: r.summary.completed,
  }));
  const classes: string[] = [];
  for (const r of labelled) for (const c of r.classes) if (!classes.includes(c.class)) classes.push(c.class);
  const row = (label: string, f: (s: RunSummary) => string | number): (string | number)[] => [
    label,
    ...runs.map((r) => f(r.summary)),
  ];
  const cls = (s: RunSummary, name: string): ClassSummary | undefined =>
    s.classes?.find((c) => c.class === name);
  return [
    {
      kind: 'chart',
      name: 'compare-classes',
      title: 'Useful on-time completions per class, side by side',
      caption:
        'Left: completions while the client still waited and before the deadline; right: all completions. A policy may complete fewer requests in all and still give more users a useful answer in time.',
      spec: compareChart(labelled),
    },
    {
      kind: 'table',
      title: 'Side by side',
      columns: ['', ...runs.map((r) => r.label)],
      rows: [
        row('offered', (s) => s.offered),
        row('attempts', (s) => s.attempts),
        row('completed', (s) => s.completed),
        row('useful on time', (s) => (s.classes ?? []).reduce((n, c) => n + c.useful_on_time, 0)),
        ...classes.map((name) => row(`  ${name}`, (s) => cls(s, name)?.useful_on_time ?? 0)),
        row('wasted tokens', (s) => s.wasted_tokens),
        row('retry amplification', (s) => s.retry_amplification),
      ],
    },
  ];
}
