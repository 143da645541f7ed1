import { describe, expect, it } from 'vitest';
import { cliffFindings } from '../findings.js';
import { fixtureCliff, fixtureSeconds, fixtureSummary, fixtureSweep } from '../test/fixtures.js';
import type { SweepData } from '../types.js';
import { adaptSpans, ceilingChart } from './ceiling.js';
import { cliffChart } from './cliff.js';
import { decisionsChart } from './decisions.js';
import { goodputChart } from './goodput.js';
import { sweepChart } from './heatmap.js';
import { latencyChart } from './latency.js';
import { tenantChart, topTenants } from './tenants.js';

/** The spec as plain JSON, as written to `.vl.json`. */
function json(spec: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
}

/** Inline data rows of a (sub)spec. */
function rows(spec: unknown): Record<string, unknown>[] {
  return ((spec as { data: { values: Record<string, unknown>[] } }).data.values ?? []).map((r) => ({ ...r }));
}

describe('in-flight and queue chart', () => {
  const spec = json(ceilingChart(fixtureSeconds(60)));
  const [inflight, queue, strip] = spec.vconcat as Record<string, unknown>[];

  it('stacks in flight, queued and the adaptive state on one shared time axis, in DejaVu Sans', () => {
    expect(Object.keys(spec)).toEqual(['$schema', 'title', 'config', 'spacing', 'resolve', 'vconcat']);
    expect(spec.resolve).toEqual({ scale: { x: 'shared', color: 'independent', strokeDash: 'independent' } });
    expect((spec.config as { font: string }).font).toBe('DejaVu Sans');
    expect((spec.vconcat as unknown[]).length).toBe(3);
  });

  it('plots in flight against the ceiling in force and the configured ceiling', () => {
    const at = (t: number) => rows(inflight).filter((r) => r.t_s === t);
    expect(at(30)).toEqual([
      { t_s: 30, series: 'configured ceiling', value: 16 },
      { t_s: 30, series: 'ceiling in force', value: 12 },
      { t_s: 30, series: 'in flight', value: 12 },
    ]);
    // One closing point after the last second.
    expect(Math.max(...rows(inflight).map((r) => r.t_s as number))).toBe(60);
  });

  it('draws the most in flight and queued at any moment of a second, not the reading at its end', () => {
    // Second 7 of the fixture reads 8 in flight and 0 queued at its end, with 9 and 2 between.
    expect(rows(inflight).find((r) => r.t_s === 7 && r.series === 'in flight')?.value).toBe(9);
    expect(rows(queue).find((r) => r.t_s === 7 && r.series === 'queued')?.value).toBe(2);
  });

  it('plots queued against the queue depth', () => {
    expect(rows(queue).filter((r) => r.t_s === 25)).toEqual([
      { t_s: 25, series: 'queue depth', value: 8 },
      { t_s: 25, series: 'queued', value: 5 },
    ]);
  });

  it('shows the adaptive state as merged spans', () => {
    expect(rows(strip)).toEqual([
      { from_s: 0, to_s: 23, state: 'open' },
      { from_s: 23, to_s: 40, state: 'tightened' },
      { from_s: 40, to_s: 60, state: 'open' },
    ]);
  });

  it('leaves a gap where there is no ceiling (0)', () => {
    const noCeiling = fixtureSeconds(3).map((r) => ({ ...r, limit: 0, configured_limit: 0 }));
    const values = rows((json(ceilingChart(noCeiling)).vconcat as unknown[])[0]);
    expect(values.filter((r) => r.series !== 'in flight').every((r) => r.value === null)).toBe(true);
  });

  it('buckets long runs, keeping the peak of each interval', () => {
    const long = fixtureSeconds(1000);
    const values = rows((json(ceilingChart(long, { maxPoints: 100 })).vconcat as unknown[])[0]);
    const inflightRows = values.filter((r) => r.series === 'in flight');
    expect(inflightRows.length).toBe(101);
    expect(inflightRows[0]).toEqual({ t_s: 0, series: 'in flight', value: 10 });
  });

  it('merges equal adaptive states and treats an empty state as off', () => {
    const r = fixtureSeconds(4).map((x, i) => ({ ...x, adapt_state: i < 2 ? '' : 'frozen' }));
    expect(adaptSpans(r)).toEqual([
      { from_s: 0, to_s: 2, state: 'off' },
      { from_s: 2, to_s: 4, state: 'frozen' },
    ]);
  });
});

describe('decisions chart', () => {
  it('stacks only the final answers that occur, in the decisions counter order, with fixed colours', () => {
    const spec = json(decisionsChart(fixtureSeconds(60)));
    const [stacked, interim] = spec.layer as {
      mark: unknown;
      encoding: Record<string, { scale?: { domain: string[]; range: string[] }; stack?: unknown }>;
      transform: unknown;
    }[];
    const enc = stacked?.encoding ?? {};
    expect(enc.color?.scale?.domain).toEqual(['admitted', 'capacity_shed', 'queued', 'queue_timeout']);
    expect(enc.color?.scale?.range).toEqual(['#2ca02c', '#d62728', '#1f77b4', '#9467bd']);
    expect(stacked?.mark).toEqual({ type: 'area', interpolate: 'step-after' });
    expect(stacked?.transform).toEqual([{ filter: 'datum.final' }]);
    expect(interim?.transform).toEqual([{ filter: '!datum.final' }]);
    expect(interim?.encoding.y?.stack).toBeNull();
    expect(rows(spec).filter((r) => r.t_s === 30)).toEqual([
      { t_s: 30, reason: 'admitted', rank: 0, per_s: 14, final: true },
      { t_s: 30, reason: 'capacity_shed', rank: 1, per_s: 8, final: true },
      { t_s: 30, reason: 'queued', rank: 2, per_s: 6, final: false },
      { t_s: 30, reason: 'queue_timeout', rank: 3, per_s: 2, final: true },
    ]);
  });

  it('does not count a queued-then-admitted attempt twice: the stack sums to the final answers', () => {
    // 32 attempts a second, every one queued first and then admitted.
    const sec = fixtureSeconds(10).map((r) => ({ ...r, decisions: { admitted: 32, queued: 32 } }));
    const values = rows(json(decisionsChart(sec)));
    const stackedAt5 = values
      .filter((r) => r.t_s === 5 && r.final)
      .reduce((s, r) => s + (r.per_s as number), 0);
    expect(stackedAt5).toBe(32);
  });

  it('shades the warm-up beneath the stack when there is one', () => {
    const spec = json(decisionsChart(fixtureSeconds(60), { warmupS: 5 }));
    const [band] = spec.layer as {
      mark: { type: string };
      data: { values: { from_s: number; to_s: number }[] };
    }[];
    expect(band?.mark.type).toBe('rect');
    expect(band?.data.values[0]).toMatchObject({ from_s: 0, to_s: 5 });
  });

  it('shows a rate per second when seconds are bucketed', () => {
    const spec = json(decisionsChart(fixtureSeconds(60), { maxPoints: 6 }));
    const admitted = rows(spec).filter((r) => r.reason === 'admitted');
    expect(admitted.map((r) => r.t_s)).toEqual([0, 10, 20, 30, 40, 50]);
    expect(admitted[2]?.per_s).toBe(14);
  });
});

describe('latency chart', () => {
  it('has one row per metric with p50 and p95, and gaps for seconds without completions', () => {
    const spec = json(latencyChart(fixtureSeconds(10)));
    expect((spec.facet as { row: { field: string } }).row.field).toBe('metric');
    expect(spec.resolve).toEqual({ scale: { y: 'independent' } });
    const values = rows(spec);
    expect(values.filter((r) => r.t_s === 0).every((r) => r.ms === null)).toBe(true);
    expect(values.filter((r) => r.t_s === 1)).toEqual([
      { t_s: 1, metric: 'time to first token', percentile: 'p50', ms: 201 },
      { t_s: 1, metric: 'time to first token', percentile: 'p95', ms: 451 },
      { t_s: 1, metric: 'end to end', percentile: 'p50', ms: 3100 },
      { t_s: 1, metric: 'end to end', percentile: 'p95', ms: 5400 },
    ]);
  });
});

describe('cliff chart', () => {
  it('draws one line per mode, goodput solid and throughput dashed, and the ideal diagonal', () => {
    const spec = json(cliffChart(fixtureCliff()));
    const [ideal, lines] = spec.layer as Record<string, unknown>[];
    expect(rows(ideal)).toEqual([
      { offered_rps: 0, ideal: 0 },
      { offered_rps: 80, ideal: 80 },
    ]);
    const enc = (lines as { encoding: { color: { scale: { domain: string[] } } } }).encoding;
    expect(enc.color.scale.domain).toEqual(['gate off', 'observe', 'enforce']);
    const enforce80 = rows(lines).filter((r) => r.mode === 'enforce' && r.offered_rps === 80);
    expect(enforce80).toEqual([
      { mode: 'enforce', figure: 'goodput', offered_rps: 80, rps: 19.5, shed_rate: 0.75, ttft_p95_ms: 1500 },
      { mode: 'enforce', figure: 'throughput', offered_rps: 80, rps: 20, shed_rate: 0.75, ttft_p95_ms: 1500 },
    ]);
  });

  it('draws HAProxy as a fourth line, after the gate modes, when the cliff test ran it', () => {
    const points = [
      ...fixtureCliff(),
      {
        mode: 'haproxy' as const,
        offered_rps: 80,
        goodput_rps: 18,
        throughput_rps: 19,
        shed_rate: 0.7,
        ttft_p95_ms: 1400,
      },
    ];
    const spec = json(cliffChart(points));
    const lines = (spec.layer as { encoding?: { color: { scale: { domain: string[] } } } }[])[1];
    expect(lines?.encoding?.color.scale.domain).toEqual(['gate off', 'observe', 'enforce', 'HAProxy 2.6']);
    expect(
      rows(spec.layer && (spec.layer as Record<string, unknown>[])[1]).filter(
        (r) => r.mode === 'HAProxy 2.6',
      ),
    ).toHaveLength(2);
    expect(cliffFindings(points).some((f) => f.startsWith('HAProxy 2.6: goodput peaks at 18'))).toBe(true);
  });

  it('lists only the modes present', () => {
    const spec = json(cliffChart(fixtureCliff().filter((p) => p.mode === 'enforce')));
    const lines = (spec.layer as { encoding?: { color: { scale: { domain: string[] } } } }[])[1];
    expect(lines?.encoding?.color.scale.domain).toEqual(['enforce']);
  });
});

describe('tenant chart', () => {
  it("shows each tenant's share of offered load beside its share of goodput", () => {
    const s = fixtureSummary();
    const spec = json(tenantChart(s.tenants, { jainFairness: s.jain_fairness }));
    const values = rows(spec);
    expect(values.filter((r) => r.tenant === 'beta').map((r) => [r.measure, r.share])).toEqual([
      ['share of offered load', 0.3],
      ['share of goodput', 0.290323],
    ]);
    const goodShares = values.filter((r) => r.measure === 'share of goodput').map((r) => r.share as number);
    expect(goodShares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    expect((spec.title as { subtitle: string }).subtitle).toContain("Jain's index 0.930");
  });

  it('folds the smallest tenants into one "other" bar', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      tenant: `t${String(i).padStart(2, '0')}`,
      offered: 100 - i,
      completed: 50,
      good: 40,
      goodput_rps: 1,
      good_share: 0.4,
    }));
    const top = topTenants(many, 10);
    expect(top.length).toBe(10);
    expect(top[9]).toMatchObject({ tenant: 'other (21 tenants)', good: 840, goodput_rps: 21 });
  });
});

describe('sweep chart', () => {
  const sweep = fixtureSweep();

  it('maps the first two varied fields to x and y, colour to goodput, outlines the feasible cells and stars the recommendation', () => {
    const spec = json(sweepChart(sweep));
    const enc = spec.encoding as Record<string, { field: string; title: string }>;
    expect([enc.x?.field, enc.x?.title, enc.y?.field, enc.y?.title]).toEqual([
      'x',
      'fc_max_outstanding',
      'y',
      'fc_max_queue_depth',
    ]);
    const [cells, outline, text] = spec.layer as Record<string, unknown>[];
    expect((cells as { encoding: { color: { field: string } } }).encoding.color.field).toBe('goodput_rps');
    expect(outline).toMatchObject({
      transform: [{ filter: 'datum.feasible' }],
      mark: { type: 'rect', fillOpacity: 0 },
    });
    expect(text).toMatchObject({ encoding: { text: { field: 'label' } } });
    const best = rows(spec).filter((r) => r.best);
    expect(best).toMatchObject([{ x: 32, y: 16, label: '★ 36.0', feasible: true, fig_ttft_p95_ms: 1940 }]);
    expect(rows(spec).filter((r) => r.feasible).length).toBe(5);
  });

  it('adds one panel per value of a third varied field', () => {
    const three: SweepData = {
      ...sweep,
      varied: [...sweep.varied, 'fc_max_queue_wait_ms'],
      points: [1000, 2000].flatMap((w) =>
        sweep.points.map((p) => ({ ...p, params: { ...p.params, fc_max_queue_wait_ms: w } })),
      ),
    };
    const spec = json(sweepChart(three));
    expect(spec.facet).toMatchObject({ field: 'panel' });
    expect(new Set(rows(spec).map((r) => r.panel))).toEqual(
      new Set(['fc_max_queue_wait_ms=1000', 'fc_max_queue_wait_ms=2000']),
    );
  });

  it('draws goodput with its confidence band when only one field varies', () => {
    const one: SweepData = {
      ...sweep,
      varied: ['fc_max_outstanding'],
      points: sweep.points.filter((p) => p.params.fc_max_queue_depth === 16),
    };
    const spec = json(sweepChart(one));
    expect(rows(spec).map((r) => [r.x, r.ci_low, r.ci_high, r.status])).toEqual([
      [8, 8.8, 10.4, 'misses an SLO'],
      [16, 17.6, 19.2, 'meets every SLO'],
      [32, 35.2, 36.8, 'meets every SLO'],
    ]);
    expect((spec.layer as { mark: { type: string } }[]).map((l) => l.mark.type)).toEqual([
      'area',
      'line',
      'point',
      'text',
    ]);
  });

  it('draws nothing when no field varies (the table stands alone)', () => {
    expect(sweepChart({ ...sweep, varied: [] })).toBeNull();
  });
});

describe('goodput chart', () => {
  it('draws good completions per second against offered and completed, per second', () => {
    const spec = json(goodputChart(fixtureSeconds(60)));
    expect(rows(spec).filter((r) => r.t_s === 30)).toEqual([
      { t_s: 30, series: 'offered', per_s: 30 },
      { t_s: 30, series: 'completed', per_s: 14 },
      { t_s: 30, series: 'good', per_s: 9 },
    ]);
  });

  it('shades the warm-up under the lines', () => {
    const spec = json(goodputChart(fixtureSeconds(60), { warmupS: 5 }));
    const [band, lines] = spec.layer as {
      mark: { type: string };
      data?: { values: Record<string, unknown>[] };
    }[];
    expect(band?.mark.type).toBe('rect');
    expect(band?.data?.values[0]).toMatchObject({ from_s: 0, to_s: 5 });
    expect(lines?.mark.type).toBe('line');
  });
});
