/**
 * The observe report as terminal text and as report sections (tables and a
 * chart of the would-be refusals over time) for the HTML/Markdown report.
 */
import { chartConfig } from '../reports/charts/theme.js';
import { pct } from '../reports/format.js';
import { textTable } from '../reports/text-table.js';
import type { Section, VegaLiteSpec } from '../reports/types.js';
import { OBSERVED_CEILINGS } from './collect.js';
import type { ObserveResult } from './observe.js';

/** The report as aligned text. */
export function observeText(r: ObserveResult, topTenants = 10): string {
  const out: string[] = [];
  const t = r.trace;
  out.push(
    `trace          ${t.file} (${t.format}, speed-up ${t.speedup}): ${t.requests} requests over ${t.replay_s} s${t.bad_lines > 0 ? `, ${t.bad_lines} bad lines skipped` : ''}`,
  );
  out.push(`peak in flight ${r.peak_inflight}`);
  out.push(
    `enforce would  shed ${r.would_shed} (${pct(r.would_shed_share)}) and queue ${r.would_queue} of ${t.requests} requests`,
  );
  out.push(
    '  (observe counts "would queue" whenever the request could have waited; the enforce run below shows what the queue bound did)',
  );
  const R = 'right' as const;
  out.push(
    '',
    textTable(
      ['per ceiling', 'would shed', 'would queue'],
      OBSERVED_CEILINGS.map((c) => [c, r.per_ceiling[c].shed, r.per_ceiling[c].queue]),
      { align: ['left', R, R] },
    ),
  );
  out.push(
    '',
    'fc_max_outstanding that would have shed at most (no queue)',
    textTable(
      ['share shed', 'fc_max_outstanding'],
      r.ceilings.map((c) => [pct(c.shed_share), c.max_outstanding]),
      { align: [R, R], indent: 2 },
    ),
  );
  out.push(
    '',
    textTable(
      ['the same trace', 'goodput req/s', 'good share', 'shed rate', 'TTFT p95 ms', 'max in flight'],
      Object.entries(r.compare).map(([mode, f]) => [
        mode,
        f.goodput_rps,
        pct(f.goodput_share),
        pct(f.shed_rate),
        Math.round(f.ttft_p95_ms),
        f.max_inflight,
      ]),
      { align: ['left', R, R, R, R, R] },
    ),
  );
  if (r.tenants.length > 1) {
    out.push(
      '',
      `tenants (top ${Math.min(topTenants, r.tenants.length)} of ${r.tenants.length})`,
      textTable(
        ['tenant', 'offered', 'would shed', 'would queue'],
        r.tenants.slice(0, topTenants).map((x) => [x.tenant, x.offered, x.would_shed, x.would_queue]),
        { align: ['left', R, R, R], indent: 2 },
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

/** The would-be refusals per time bucket, stacked, with arrivals as a line. */
export function wouldChart(r: ObserveResult): VegaLiteSpec {
  const values = r.over_time.flatMap((b) => [
    { t_s: b.t_s, kind: 'would shed', n: b.would_shed },
    { t_s: b.t_s, kind: 'would queue', n: b.would_queue },
  ]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'What enforce would have done', subtitle: `requests per ${r.bucket_s} s of replay` },
    width: 640,
    height: 220,
    config: chartConfig(),
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: {
        field: 't_s',
        type: 'quantitative',
        title: 'replay time (s)',
        scale: { nice: false, domainMin: 0 },
      },
      y: { field: 'n', type: 'quantitative', stack: 'zero', title: 'requests' },
      color: {
        field: 'kind',
        type: 'nominal',
        title: 'enforce would',
        scale: { domain: ['would shed', 'would queue'], range: ['#d62728', '#1f77b4'] },
      },
    },
  } as VegaLiteSpec;
}

/** Report sections for the observe run's report. */
export function observeSections(r: ObserveResult): Section[] {
  return [
    {
      kind: 'text',
      title: 'What enforce would have done',
      paragraphs: [
        `Replaying ${r.trace.requests} requests with the gate in observe mode, enforce would have refused ${r.would_shed} at once (${pct(r.would_shed_share)}) and parked ${r.would_queue}. The pool peaked at ${r.peak_inflight} requests in flight.`,
      ],
    },
    { kind: 'chart', name: 'would', title: 'Would-be refusals over time', spec: wouldChart(r) },
    {
      kind: 'table',
      title: 'Would-be refusals per ceiling',
      columns: ['ceiling', 'would shed', 'would queue'],
      rows: OBSERVED_CEILINGS.map((c) => [c, r.per_ceiling[c].shed, r.per_ceiling[c].queue]),
      caption: 'A request over two ceilings counts at both.',
    },
    {
      kind: 'table',
      title: 'Pool ceilings and what they would have shed',
      columns: ['at most this share shed', 'fc_max_outstanding'],
      rows: r.ceilings.map((c) => [pct(c.shed_share), c.max_outstanding]),
      caption: 'Without a queue: an arrival that met the ceiling in flight would have been refused.',
    },
    {
      kind: 'table',
      title: 'Observe against enforce on the same trace',
      columns: ['mode', 'goodput req/s', 'good share', 'shed rate', 'TTFT p95 ms', 'max in flight'],
      rows: Object.entries(r.compare).map(([mode, f]) => [
        mode,
        f.goodput_rps,
        pct(f.goodput_share),
        pct(f.shed_rate),
        Math.round(f.ttft_p95_ms),
        f.max_inflight,
      ]),
    },
    {
      kind: 'table',
      title: 'Tenants',
      columns: ['tenant', 'offered', 'would shed', 'would queue'],
      rows: r.tenants.map((t) => [t.tenant, t.offered, t.would_shed, t.would_queue]),
      csv: 'observe-tenants.csv',
    },
  ];
}
