import { describe, expect, it } from 'vitest';
import { runScenario } from '../sim/run/run.js';
import { MemorySink } from '../sim/run/sinks.js';
import { parseScenarioText } from '../sim/scenario/load.js';
import { TINY_LOXILB } from '../sweep/test/fixtures.js';
import { ceilingChart } from './charts/ceiling.js';
import { gaugesUnseen, runReport } from './run-report.js';
import { windowFigures } from './tables.js';
import { fixtureSeconds, fixtureSummary } from './test/fixtures.js';
import type { ChartSection, TableSection } from './types.js';

function seriesMax(spec: unknown, panel: number, series: string): number {
  const view = (spec as { vconcat: { data: { values: { series: string; value: number | null }[] } }[] })
    .vconcat[panel];
  return Math.max(...(view?.data.values ?? []).filter((v) => v.series === series).map((v) => v.value ?? 0));
}

describe('the run report', () => {
  it('opens its charts with goodput over time, good completions against offered', () => {
    const r = runReport(fixtureSummary(), fixtureSeconds(30));
    const charts = r.sections.filter((s): s is ChartSection => s.kind === 'chart').map((s) => s.name);
    expect(charts[0]).toBe('goodput');
  });

  it('counts decisions in the summary over the measured window, the window of every other figure', () => {
    const summary = { ...fixtureSummary(), warmup_s: 5 };
    const seconds = fixtureSeconds(30);
    const w = windowFigures(summary, seconds);
    const after = seconds.filter((r) => r.t_s > 5);
    expect(w.window).toBe('measured');
    expect(w.decisions.admitted).toBe(after.reduce((s, r) => s + (r.decisions.admitted ?? 0), 0));
    const table = runReport(summary, seconds).sections[0] as TableSection;
    expect(table.caption).toContain('measured window');
    const row = table.rows.find((x) => x[0] === 'decisions');
    expect(row?.[1]).toContain(`admitted ${w.decisions.admitted}`);
  });

  it('says which figures cover the whole run when it has no per-second rows', () => {
    const table = runReport(fixtureSummary(), []).sections[0] as TableSection;
    expect(table.rows.map((x) => x[0])).toContain('decisions (whole run)');
  });

  it('draws no tenant chart for a single tenant, keeping the table', () => {
    const s = fixtureSummary();
    const one = { ...s, tenants: s.tenants.slice(0, 1) };
    const r = runReport(one, fixtureSeconds(10));
    expect(r.sections.some((x) => x.kind === 'chart' && x.name === 'tenants')).toBe(false);
    expect(r.sections.some((x) => x.kind === 'table' && x.title === 'Tenants')).toBe(true);
    expect(
      runReport(s, fixtureSeconds(10)).sections.some((x) => x.kind === 'chart' && x.name === 'tenants'),
    ).toBe(true);
  });

  it('says to enable fc_expose_headers instead of drawing zeros when the client saw no gauges', () => {
    const blind = fixtureSeconds(10).map((r) => ({
      ...r,
      inflight: 0,
      queued: 0,
      limit: 0,
      inflight_max: 0,
      queued_max: 0,
    }));
    expect(gaugesUnseen(blind)).toBe(true);
    expect(gaugesUnseen(fixtureSeconds(10))).toBe(false);
    const r = runReport(fixtureSummary(), blind);
    expect(r.sections.some((x) => x.kind === 'chart' && x.name === 'ceiling')).toBe(false);
    expect(JSON.stringify(r.sections)).toContain('enable fc_expose_headers');
  });

  it("draws in the ceiling chart the same peaks in flight and queued as the simulator's summary", async () => {
    const sink = new MemorySink(true);
    // Bursts past a ceiling of 12 at 6 req/s: the peaks (12 in flight, 4 queued) fall between
    // second marks, where the end-of-second readings show at most 11 and 0.
    const text = TINY_LOXILB.replace('fc_max_outstanding: 8', 'fc_max_outstanding: 12')
      .replace('max_num_seqs: 8', 'max_num_seqs: 64')
      .replace('rate_per_sec: 8', 'rate_per_sec: 6');
    const scenario = { ...parseScenarioText(text, 'bursty.yaml'), warmup_s: 0 };
    const summary = await runScenario(scenario, { sink });
    expect(summary.max_queued).toBeGreaterThan(Math.max(...sink.seconds.map((r) => r.queued)));
    const spec = ceilingChart(sink.seconds);
    expect(seriesMax(spec, 0, 'in flight')).toBe(summary.max_inflight);
    expect(seriesMax(spec, 1, 'queued')).toBe(summary.max_queued);
    const w = windowFigures(summary, sink.seconds);
    expect([w.max_inflight, w.max_queued]).toEqual([summary.max_inflight, summary.max_queued]);
  });
});
