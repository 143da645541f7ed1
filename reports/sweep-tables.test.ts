import { describe, expect, it } from 'vitest';
import { planSweep } from '../sweep/plan.js';
import { runSweep } from '../sweep/sweep.js';
import { tinyLoxilb } from '../sweep/test/fixtures.js';
import { sweepCsv, sweepTable } from './sweep-tables.js';
import { fixtureSweep } from './test/fixtures.js';
import type { SweepData } from './types.js';

/** Four points that tie on goodput and CI, ranked by grid order, with goodput_rps among the figures. */
function tiedSweep(): SweepData {
  const pt = (qd: number, mo: number, rank: number) => ({
    params: { fc_max_queue_depth: qd, fc_max_outstanding: mo },
    goodput_rps: 30.393,
    ci_low: 28.566,
    ci_high: 32.221,
    feasible: true,
    rank,
    figures: { goodput_rps: 30.393, goodput_share: 0.929, shed_rate: 0.023, ttft_p95_ms: 733.493 },
  });
  return {
    varied: ['fc_max_queue_depth', 'fc_max_outstanding'],
    slo: ['ttft_p95_ms<=2000'],
    points: [pt(128, 256, 3), pt(128, 320, 4), pt(64, 256, 1), pt(64, 320, 2)],
    recommendation: {
      feasible: true,
      headline: '',
      params: { fc_max_queue_depth: 64, fc_max_outstanding: 256 },
    },
  };
}

describe('the sweep points table and points.csv', () => {
  it('are ordered by the sweep rank, with a rank column, even where goodput ties', () => {
    const data = tiedSweep();
    const csv = sweepCsv(data);
    expect(csv.columns[0]).toBe('rank');
    expect(csv.rows.map((r) => r.slice(0, 3))).toEqual([
      [1, 64, 256],
      [2, 64, 320],
      [3, 128, 256],
      [4, 128, 320],
    ]);
    const table = sweepTable(data);
    expect(table.columns[0]).toBe('rank');
    expect(table.rows.map((r) => r.slice(0, 3))).toEqual([
      ['1', '64', '256'],
      ['2', '64', '320'],
      ['3', '128', '256'],
      ['4', '128', '320'],
    ]);
  });

  it('name every points.csv column once, even when goodput_rps is also a figure', () => {
    const cols = sweepCsv(tiedSweep()).columns;
    expect(new Set(cols).size).toBe(cols.length);
    expect(cols.filter((c) => c === 'goodput_rps')).toHaveLength(1);
    expect(cols).toContain('goodput_share');
  });

  it('keep the display table to the SLO figures, goodput share, shed rate and TTFT p95, ratios as percentages', () => {
    const data = tiedSweep();
    for (const p of data.points)
      Object.assign(p.figures ?? {}, { ttft_p50_ms: 1, e2e_p95_ms: 2, wasted_tokens: 3 });
    const table = sweepTable(data);
    expect(table.columns).toEqual([
      'rank',
      'fc_max_queue_depth',
      'fc_max_outstanding',
      'goodput',
      'CI',
      'meets SLOs',
      'ttft_p95_ms',
      'goodput_share',
      'shed_rate',
    ]);
    expect(table.rows[0]?.slice(-3)).toEqual(['733', '92.9%', '2.3%']);
    expect(sweepCsv(data).columns).toContain('wasted_tokens');
  });

  it('rank points without a stored rank as the sweep does: feasible, goodput, CI low end, grid order', () => {
    const rows = sweepCsv(fixtureSweep()).rows;
    expect(rows.map((r) => r[0])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rows[0]?.slice(1, 3)).toEqual([32, 16]);
  });

  it('open with the point a real sweep recommends', async () => {
    const scenario = tinyLoxilb();
    const plan = planSweep(scenario, {
      vary: ['fc_max_outstanding=4,8', 'fc_max_queue_depth=0,8'],
      slo: ['shed_rate<=0.5'],
      seeds: 1,
    });
    const result = await runSweep(scenario, plan, { workers: 0 });
    const data = result as unknown as SweepData;
    const csv = sweepCsv(data);
    const first = csv.rows[0] ?? [];
    const rec = result.recommendation.params ?? {};
    expect(first[0]).toBe(1);
    expect(first.slice(1, 3)).toEqual([rec.fc_max_outstanding, rec.fc_max_queue_depth]);
    const ranks = csv.rows.map((r) => r[0]);
    expect(ranks).toEqual([...ranks].sort((a, b) => Number(a) - Number(b)));
  });
});
