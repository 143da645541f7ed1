/**
 * A cliff step in which the driver fell behind is invalid: marked in the steps table and the text
 * output, left out of the report's points (so its chart, findings and table), named in the notes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliffCommand, cliffText } from '../cli/cliff.js';
import type { ScheduleReport } from '../loadgen/driver/lag.js';
import { cliffReport } from '../reports/cliff-report.js';
import type { RunSummary } from '../sim/run/records.js';
import { type CliffResult, finish, stepOf } from './cliff.js';
import { invalidStepsChart, stepsTable, writeCliffOutputs } from './report.js';
import { allStepsValid, invalidStepNotes } from './validity.js';

/** The summary fields a step reads. */
const summary = (goodput: number, shed: number): RunSummary =>
  ({
    goodput_rps: goodput,
    throughput_rps: goodput,
    shed_rate: shed,
    ttft_ms: { count: 10, p50: 100, p95: 200 },
    goodput_share: 0.5,
    offered: 100,
    attempts: 100,
    sheds: {},
    anomalies: {},
  }) as unknown as RunSummary;

const sched = (sends: number, late: number, p99 = 2): ScheduleReport => ({
  sends,
  late_sends: late,
  lag_p50_ms: 1,
  lag_p99_ms: p99,
  lag_max_ms: p99 * 2,
  lag_mean_ms: 1,
  kept_schedule: late === 0,
});

/** Enforce keeps goodput at 8 and 24 req/s; at 40 the driver sent 745 of 2000 requests late and
 * goodput "fell" to 2 (the harness, not the gate). Gate off at 40 kept its schedule. */
function cliff(): CliffResult {
  return finish({
    scenario: 'cliff-mm8',
    steps: [
      stepOf('enforce', 8, summary(8, 0), sched(400, 0)),
      stepOf('enforce', 24, summary(15, 0.3), sched(1200, 3)),
      stepOf('enforce', 40, summary(2, 0.6), sched(2000, 745, 412)),
      stepOf('off', 40, summary(4, 0), sched(2000, 2)),
    ],
    points: [],
    notes: [],
  });
}

describe('an invalid cliff step', () => {
  it('is a step whose driver sent more late requests than the lateness bound allows', () => {
    const r = cliff();
    expect(r.steps.map((s) => s.valid)).toEqual([true, true, false, true]);
    expect(r.steps[2]).toMatchObject({ sends: 2000, late_sends: 745, late_share: 0.3725, lag_p99_ms: 412 });
    expect(allStepsValid(r.steps)).toBe(false);
    expect(stepOf('enforce', 40, summary(2, 0.6), sched(2000, 745), 0.5).valid).toBe(true);
  });

  it('is left out of the report points, so the chart, findings and table never draw on it', () => {
    const r = cliff();
    expect(r.points.map((p) => [p.mode, p.offered_rps])).toEqual([
      ['enforce', 8],
      ['enforce', 24],
      ['off', 40],
    ]);
    const report = cliffReport({ scenario: r.scenario, points: r.points, notes: r.notes });
    const findings = report.sections.find((s) => s.title === 'Findings');
    if (findings?.kind !== 'text') throw new Error('no findings');
    const enforce = (findings.bullets ?? []).filter((b) => b.startsWith('enforce'));
    expect(enforce).toHaveLength(1);
    expect(enforce[0]).not.toContain('collapses');
    expect(enforce[0]).not.toContain('at 40.00 rps offered');
  });

  it('is named in the notes with its late sends, its lag and the bound', () => {
    expect(invalidStepNotes(cliff().steps)).toEqual([
      'INVALID step, left out of the chart, the findings and the table: enforce at 40 req/s offered (the driver fell behind: 745 of 2000 sends (37.3 %) late by > 10 ms, above the 1 % bound (5 always allowed); lag p99 412 ms, max 824 ms). Rerun it at a lower --time-scale or on a quieter machine.',
    ]);
  });

  it('is marked in the steps table and in the text output', () => {
    const r = cliff();
    const t = stepsTable(r.steps);
    if (t.kind !== 'table') throw new Error('not a table');
    const valid = t.columns.indexOf('valid');
    expect(t.rows.map((row) => String(row[valid]).slice(0, 7))).toEqual(['yes', 'yes', 'INVALID', 'yes']);
    const text = cliffText(r).split('\n');
    expect(text.filter((l) => l.endsWith(' INVALID'))).toEqual([
      expect.stringMatching(/^ {2}enforce +40 .* 745\/2000 INVALID$/),
    ]);
  });

  it('is drawn as a red cross over the valid steps in a chart of its own', () => {
    const chart = invalidStepsChart(cliff().steps);
    if (chart === undefined) throw new Error('no chart');
    expect(chart.name).toBe('cliff-invalid-steps');
    const layers = (
      chart.spec as {
        layer: { data?: { values?: { offered_rps: number; line: string }[] }; mark?: unknown }[];
      }
    ).layer;
    const last = layers.at(-1);
    expect(last?.mark).toMatchObject({ shape: 'cross' });
    expect(last?.data?.values?.map((v) => [v.line, v.offered_rps])).toEqual([['enforce', 40]]);
    expect(invalidStepsChart(cliff().steps.filter((s) => s.valid))).toBeUndefined();
  });

  it('is marked in the written report: its chart renders, its note and its row say INVALID', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-invalid-'));
    try {
      await writeCliffOutputs(dir, cliff());
      const md = readFileSync(join(dir, 'report', 'report.md'), 'utf8');
      expect(md).toContain('## Invalid steps');
      expect(md).toContain(
        'INVALID step, left out of the chart, the findings and the table: enforce at 40 req/s',
      );
      expect(existsSync(join(dir, 'report', 'cliff-invalid-steps.svg'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes sluice cliff say it has a --max-late-share flag defaulting to the bound', () => {
    expect(cliffCommand().helpInformation()).toMatch(/--max-late-share <x>[\s\S]*default 0\.01/);
  });
});
