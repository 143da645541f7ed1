/**
 * Section (g) and the other tables: the run summary, per-tenant figures,
 * sweep points and cliff points, each as a display table and (where useful)
 * a raw CSV export.
 */
import type { RunSummary, SecondRow, TenantSummary } from '../sim/run/records.js';
import { MODE_LABELS } from './charts/cliff.js';
import { counts, ms, num, pct, rps } from './format.js';
import { CLIFF_MODES, type CliffPoint, type CsvTable, type TableSection } from './types.js';

/** The figures of the measured window that the summary carries for the whole run. */
export interface WindowFigures {
  decisions: Record<string, number>;
  max_inflight: number;
  max_queued: number;
  /** Which window these figures cover, for the labels. */
  window: 'measured' | 'whole run';
}

/**
 * The decisions and peaks over the measured window (the seconds after warm-up), the window of
 * every other summary figure, from the per-second rows; a row `t_s` covers (t_s − 1, t_s].
 * Without rows, the summary's own whole-run figures, said to be so.
 */
export function windowFigures(s: RunSummary, seconds: readonly SecondRow[]): WindowFigures {
  const rows = seconds.filter((r) => r.t_s > s.warmup_s);
  if (rows.length === 0) {
    return {
      decisions: s.decisions,
      max_inflight: s.max_inflight,
      max_queued: s.max_queued,
      window: 'whole run',
    };
  }
  const decisions: Record<string, number> = {};
  for (const r of rows)
    for (const [k, v] of Object.entries(r.decisions)) decisions[k] = (decisions[k] ?? 0) + v;
  return {
    decisions,
    max_inflight: Math.max(...rows.map((r) => Math.max(r.inflight_max, r.inflight))),
    max_queued: Math.max(...rows.map((r) => Math.max(r.queued_max, r.queued))),
    window: 'measured',
  };
}

/**
 * The run summary as a two-column table, goodput first. Every figure covers the measured window
 * (decisions and peaks from the per-second rows); without rows, those three say they cover the
 * whole run.
 */
export function summaryTable(s: RunSummary, seconds: readonly SecondRow[] = []): TableSection {
  const w = windowFigures(s, seconds);
  const whole = w.window === 'whole run' ? ' (whole run)' : '';
  const p = (x: { p50: number; p95: number; p99: number }): string =>
    `${ms(x.p50)} / ${ms(x.p95)} / ${ms(x.p99)}`;
  const limit = (v: number): string => (v > 0 ? num(v) : 'none');
  const rows: [string, string][] = [
    ['scenario', s.scenario],
    ['seed · dialect', `${s.seed} · ${s.dialect}`],
    [
      'measured window',
      `${num(s.measured_s)} s (after ${num(s.warmup_s)} s warm-up, of ${num(s.duration_s)} s)`,
    ],
    ['goodput', `${rps(s.goodput_rps)} (${pct(s.goodput_share)} of offered requests good)`],
    [
      'throughput',
      s.output_tokens_per_s === null
        ? rps(s.throughput_rps)
        : `${rps(s.throughput_rps)} · ${num(s.output_tokens_per_s)} output tokens/s`,
    ],
    [
      'offered · attempts',
      `${num(s.offered)} · ${num(s.attempts)} (retry amplification ${num(s.retry_amplification, 2)})`,
    ],
    ['completed · good', `${num(s.completed)} · ${num(s.good)}`],
    ['shed rate', pct(s.shed_rate)],
    ['TTFT p50 / p95 / p99', p(s.ttft_ms)],
    ['TPOT (time per output token) p50 / p95 / p99', s.tpot_ms.count === 0 ? 'not measured' : p(s.tpot_ms)],
    [
      'ITL (inter-token latency) p50 / p95 / p99',
      // A summary written before ITL was reported has no itl_ms.
      s.itl_ms === null || s.itl_ms === undefined
        ? 'not measured'
        : s.itl_ms.count === 0
          ? 'no streamed tokens'
          : p(s.itl_ms),
    ],
    ['end to end p50 / p95 / p99', p(s.e2e_ms)],
    ['queue wait p50 / p95 / p99', p(s.queue_wait_ms)],
    [`peak in flight · ceiling${whole}`, `${num(w.max_inflight)} · ${limit(s.ceilings.max_outstanding)}`],
    [`peak queued · queue depth${whole}`, `${num(w.max_queued)} · ${limit(s.ceilings.queue_depth)}`],
    ['queue wait bound', ms(s.ceilings.queue_wait_ms)],
    [`decisions${whole}`, counts(w.decisions)],
    ['refusals seen by clients', counts(s.sheds)],
    ['outcomes', counts(s.outcomes)],
    ["Jain's fairness index", num(s.jain_fairness, 3)],
    ['tokens generated after the client left', num(s.wasted_tokens)],
    ['conservation', s.conservation_ok ? 'ok' : 'VIOLATED (attempts ≠ sum of outcomes)'],
    ['anomalies', counts(s.anomalies)],
  ];
  const caption =
    w.window === 'measured'
      ? s.warmup_s > 0
        ? `Every figure covers the measured window, after the first ${num(s.warmup_s)} s of warm-up.`
        : 'Every figure covers the whole run (it has no warm-up).'
      : 'Figures cover the measured window, after warm-up, except those marked whole run (this run has no timeseries.csv to window them).';
  return { kind: 'table', title: 'Summary', columns: ['figure', 'value'], rows, caption };
}

const TENANT_COLUMNS = ['tenant', 'offered', 'completed', 'good', 'goodput_rps', 'good_share'];

/** Tenants, largest offered first, as a display table naming `tenants.csv`. */
export function tenantTable(tenants: readonly TenantSummary[]): TableSection {
  const sorted = sortTenants(tenants);
  return {
    kind: 'table',
    title: 'Tenants',
    columns: ['tenant', 'offered', 'completed', 'good', 'goodput', 'good / offered'],
    rows: sorted.map((t) => [
      t.tenant,
      num(t.offered),
      num(t.completed),
      num(t.good),
      rps(t.goodput_rps),
      pct(t.good_share),
    ]),
    csv: 'tenants.csv',
  };
}

/** The raw tenant figures for `tenants.csv`. */
export function tenantCsv(tenants: readonly TenantSummary[]): CsvTable {
  return {
    file: 'tenants.csv',
    columns: TENANT_COLUMNS,
    rows: sortTenants(tenants).map((t) => [
      t.tenant,
      t.offered,
      t.completed,
      t.good,
      t.goodput_rps,
      t.good_share,
    ]),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortTenants(tenants: readonly TenantSummary[]): TenantSummary[] {
  return [...tenants].sort((a, b) => b.offered - a.offered || cmp(a.tenant, b.tenant));
}

function sortCliff(points: readonly CliffPoint[]): CliffPoint[] {
  return [...points].sort(
    (a, b) => CLIFF_MODES.indexOf(a.mode) - CLIFF_MODES.indexOf(b.mode) || a.offered_rps - b.offered_rps,
  );
}

/** The cliff points as a display table, naming `cliff.csv`. */
export function cliffTable(points: readonly CliffPoint[]): TableSection {
  return {
    kind: 'table',
    title: 'Cliff test points',
    columns: ['gate mode', 'offered', 'goodput', 'throughput', 'shed rate', 'TTFT p95'],
    rows: sortCliff(points).map((p) => [
      MODE_LABELS[p.mode],
      rps(p.offered_rps),
      rps(p.goodput_rps),
      rps(p.throughput_rps),
      pct(p.shed_rate),
      p.ttft_p95_ms === null ? '' : ms(p.ttft_p95_ms),
    ]),
    csv: 'cliff.csv',
  };
}

/** The raw cliff points for `cliff.csv`. */
export function cliffCsv(points: readonly CliffPoint[]): CsvTable {
  return {
    file: 'cliff.csv',
    columns: ['mode', 'offered_rps', 'goodput_rps', 'throughput_rps', 'shed_rate', 'ttft_p95_ms'],
    rows: sortCliff(points).map((p) => [
      p.mode,
      p.offered_rps,
      p.goodput_rps,
      p.throughput_rps,
      p.shed_rate,
      p.ttft_p95_ms ?? '',
    ]),
  };
}
