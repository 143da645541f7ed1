import { describe, expect, it } from 'vitest';
import type { ClassSummary, RunSummary } from '../sim/run/records.js';
import { classSections, compareSections } from './class-sections.js';

const P = { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };

function cls(
  name: string,
  useful: number,
  completed: number,
  over: Partial<ClassSummary> = {},
): ClassSummary {
  return {
    class: name,
    offered: 100,
    attempts: 120,
    completed,
    useful_on_time: useful,
    useful_share: useful / 100,
    completed_late: completed - useful,
    dispositions: {},
    reject_reasons: {},
    queue_wait_ms: P,
    ...over,
  };
}

function summary(
  name: string,
  classes: ClassSummary[] | undefined,
  completed: number,
  policy = false,
): RunSummary {
  return {
    scenario: name,
    seed: 1,
    offered: 200,
    attempts: 240,
    completed,
    wasted_tokens: 0,
    retry_amplification: 1.2,
    measured_s: 60,
    ...(classes === undefined ? {} : { classes }),
    ...(policy
      ? {
          policy: {
            file: 'p.yaml',
            scorecard: { totals: { offered: 240 } },
            useful_on_time: {},
            deferred: { completed: 0, pending_at_end: 0 },
          },
        }
      : {}),
  } as unknown as RunSummary;
}

describe('class sections of the run report', () => {
  it('are absent for a run without classes', () => {
    expect(classSections(summary('plain', undefined, 10))).toEqual([]);
  });

  it('show the classes, and with a policy the dispositions, reject reasons and scorecard', () => {
    const a = cls('chat', 40, 60, {
      dispositions: { admit: 50, reject: 10 },
      reject_reasons: { tenant_quota: 10 },
    });
    const plain = classSections(summary('fifo', [a], 60));
    expect(plain.map((s) => s.title)).toEqual(['Workload classes']);
    const withPolicy = classSections(summary('policy', [a], 60, true));
    expect(withPolicy.map((s) => s.title)).toEqual([
      'Workload classes',
      'Dispositions per class',
      'Reject reasons',
      'Policy scorecard',
    ]);
    const rejects = withPolicy[2]!;
    expect(rejects.kind === 'table' && rejects.rows).toEqual([['chat', 10]]);
  });

  it('add a fallback pool table when the policy degraded requests to a pool, in the summary order', () => {
    const base = summary('pooled', [cls('chat', 40, 60)], 60, true);
    const fig = {
      engines: 1,
      sent: 9,
      completed: 7,
      useful_on_time: 6,
      failed: 1,
      cancelled: 1,
      in_system_at_end: 0,
    };
    const s = {
      ...base,
      policy: {
        ...base.policy!,
        fallback_pools: {
          small: fig,
          spare: { ...fig, engines: 2, sent: 0, completed: 0, useful_on_time: 0, failed: 0, cancelled: 0 },
        },
      },
    } as RunSummary;
    const sections = classSections(s);
    expect(sections.map((x) => x.title)).toEqual([
      'Workload classes',
      'Dispositions per class',
      'Fallback pools',
      'Policy scorecard',
    ]);
    const t = sections[2]!;
    expect(t.kind === 'table' && t.rows).toEqual([
      ['small', 1, 9, 7, 6, 1, 1, 0],
      ['spare', 2, 0, 0, 0, 0, 0, 0],
    ]);
    // An empty record adds no table.
    const none = { ...base, policy: { ...base.policy!, fallback_pools: {} } } as RunSummary;
    expect(classSections(none).map((x) => x.title)).not.toContain('Fallback pools');
  });

  it('put runs side by side: per class, useful on time and completed of each run', () => {
    const fifo = summary('fifo', [cls('chat', 5, 90), cls('batch', 2, 3)], 93);
    const policy = summary('policy', [cls('chat', 80, 85)], 85);
    const [chart, table] = compareSections([
      { label: 'fifo', summary: fifo },
      { label: 'policy', summary: policy },
    ]);
    expect(chart!.kind).toBe('chart');
    const values = (chart as { spec: { data: { values: Record<string, unknown>[] } } }).spec.data.values;
    expect(values).toContainEqual({ class: 'chat', run: 'policy', measure: 'useful on time', requests: 80 });
    expect(values).toContainEqual({ class: 'batch', run: 'policy', measure: 'completed', requests: 0 });
    expect(values).toContainEqual({
      class: 'all classes',
      run: 'fifo',
      measure: 'useful on time',
      requests: 7,
    });
    expect(values).toContainEqual({ class: 'all classes', run: 'fifo', measure: 'completed', requests: 93 });
    expect(table!.kind === 'table' && table!.rows).toContainEqual(['useful on time', 7, 80]);
    expect(table!.kind === 'table' && table!.rows).toContainEqual(['  batch', 2, 0]);
  });
});
