/**
 * The run summary as text for a terminal: the figures a person reads first.
 */
import type { Percentiles, RunSummary } from '../sim/run/records.js';

const ms = (p: Percentiles): string =>
  p.count === 0
    ? '-'
    : `p50 ${p.p50.toFixed(0)}  p95 ${p.p95.toFixed(0)}  p99 ${p.p99.toFixed(0)}  max ${p.max.toFixed(0)}`;

/** Percentiles of a figure of a few ms (TPOT, ITL), with one decimal. */
const ms2 = (p: Percentiles): string =>
  p.count === 0
    ? '-'
    : `p50 ${p.p50.toFixed(1)}  p95 ${p.p95.toFixed(1)}  p99 ${p.p99.toFixed(1)}  max ${p.max.toFixed(1)}`;

/** `k n, k n` of the non-zero counts. */
const counts = (r: Readonly<Record<string, number>>): string =>
  Object.entries(r)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** One row per workload class (clients with envelope classes), then the policy's totals. */
function classRows(s: RunSummary): [string, string][] {
  const rows: [string, string][] = [];
  for (const c of s.classes ?? []) {
    const disp = counts(c.dispositions);
    rows.push([
      `class ${c.class}`,
      `offered ${c.offered}, completed ${c.completed}, useful on time ${c.useful_on_time} (${(c.useful_share * 100).toFixed(1)} %), late ${c.completed_late}${disp === '' ? '' : `; ${disp}`}`,
    ]);
    const why = counts(c.reject_reasons);
    if (why !== '') rows.push([`  rejected`, why]);
  }
  const p = s.policy;
  if (p !== undefined) {
    const useful = Object.values(p.useful_on_time).reduce((a, b) => a + b, 0);
    rows.push([
      'policy',
      `${p.file}: useful on time ${useful}; deferred completed ${p.deferred.completed}, pending at end ${p.deferred.pending_at_end}`,
    ]);
    const ds = p.defer_store;
    if (ds !== undefined && ds.failures > 0)
      rows.push([
        '  defer store',
        `${ds.failures} calls failed: ${ds.refused_defers} defers refused, ${ds.stopped_drains} drain steps stopped, ${ds.unrecorded_ends} ends unwritten at end`,
      ]);
    for (const [name, f] of Object.entries(p.fallback_pools ?? {}))
      rows.push([
        `  fallback ${name}`,
        `${f.engines} engine${f.engines === 1 ? '' : 's'}; degraded to it ${f.sent}: completed ${f.completed}, useful on time ${f.useful_on_time}, failed ${f.failed}, cancelled ${f.cancelled}, in system at end ${f.in_system_at_end}`,
      ]);
    for (const [name, d] of Object.entries(p.dependencies ?? {}))
      if (d.opened > 0)
        rows.push([
          `  dependency ${name}`,
          `opened ${d.opened} time${d.opened === 1 ? '' : 's'}, open ${(d.open_ms / 1000).toFixed(1)} s in all (dependent classes rejected with dependency_open)`,
        ]);
  }
  return rows;
}

/** Renders the summary as aligned lines. */
export function summaryText(s: RunSummary): string {
  const rows: [string, string][] = [
    [
      'scenario',
      `${s.scenario} (seed ${s.seed}, ${s.dialect} gate, ${s.duration_s} s, first ${s.warmup_s} s not counted)`,
    ],
    ['offered', `${s.offered} requests (${s.attempts} attempts, amplification ${s.retry_amplification})`],
    ['goodput', `${s.goodput_rps} req/s good (${(s.goodput_share * 100).toFixed(1)} % of offered)`],
    [
      'throughput',
      `${s.request_throughput_per_s} req/s completed${s.output_tokens_per_s === null ? '' : `, ${s.output_tokens_per_s} output tokens/s`}`,
    ],
    ['shed rate', `${(s.shed_rate * 100).toFixed(1)} % of attempts`],
    ['TTFT ms', ms(s.ttft_ms)],
    ['TPOT ms', ms2(s.tpot_ms)],
    ['ITL ms', s.itl_ms === null ? 'not measured (k6 reads each body whole)' : ms2(s.itl_ms)],
    ['e2e ms', ms(s.e2e_ms)],
    ['queue wait ms', ms(s.queue_wait_ms)],
    [
      'max in flight',
      `${s.max_inflight} (ceiling ${s.ceilings.max_outstanding || 'none'}); max queued ${s.max_queued} (depth ${s.ceilings.queue_depth})`,
    ],
    [
      'outcomes',
      Object.entries(s.outcomes)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
    ],
    [
      'refusals',
      Object.entries(s.sheds)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none',
    ],
    ['wasted tokens', String(s.wasted_tokens)],
    ['fairness', `Jain ${s.jain_fairness} over ${s.tenants.length} tenant(s)`],
    [
      'anomalies',
      Object.entries(s.anomalies)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
    ],
    ['conservation', s.conservation_ok ? 'ok' : 'BROKEN'],
    ...classRows(s),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return `${rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}
