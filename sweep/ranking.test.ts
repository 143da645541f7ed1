import { describe, expect, it } from 'vitest';
import { pointResult } from './aggregate.js';
import type { Params } from './grid.js';
import { type Figures, METRIC_NAMES } from './metrics.js';
import type { SweepPlan } from './plan.js';
import { bindingConstraint, rankPoints, recommend } from './ranking.js';
import { parseSlo } from './slo.js';

/** Figures with every metric 0 except those given. */
function figures(f: Partial<Figures>): Figures {
  const out = Object.fromEntries(METRIC_NAMES.map((n) => [n, 0])) as Figures;
  return { ...out, ...f };
}

function plan(over: Partial<SweepPlan> = {}): SweepPlan {
  return {
    scenario: 'synthetic',
    file: 'synthetic.yaml',
    scenario_sha256: '0',
    dialect: 'loxilb',
    base: { externalIP: '192.0.2.10', port: 8080, fc_mode: 'enforce', fc_max_outstanding: 64 },
    vary: [{ field: 'fc_max_outstanding', values: [8, 16, 32] }],
    slo: ['ttft_p95_ms<=2000'],
    base_seed: 1,
    seeds: [1, 2, 3],
    ...over,
  };
}

/** A point from per-seed (goodput, ttft p95). */
function point(index: number, params: Params, seeds: [number, number | null][], slo: string[]) {
  return pointResult(
    index,
    params,
    seeds.map(([g, t]) => figures({ goodput_rps: g, ttft_p95_ms: t })),
    slo.map(parseSlo),
  );
}

describe('a point across seeds', () => {
  it('has the mean goodput, its 95% t interval, per-seed goodput and mean figures', () => {
    const p = point(
      0,
      { fc_max_outstanding: 8 },
      [
        [10, 1000],
        [12, 1500],
        [14, 2000],
      ],
      ['ttft_p95_ms<=2000'],
    );
    expect(p).toMatchObject({
      goodput_rps: 12,
      ci_low: 7.031725,
      ci_high: 16.968275,
      goodput_by_seed: [10, 12, 14],
      feasible: true,
      failed: [],
    });
    expect(p.figures.ttft_p95_ms).toBe(1500);
  });

  it('judges SLOs on the mean over seeds, so one bad seed does not sink a point', () => {
    const p = point(
      0,
      {},
      [
        [10, 1000],
        [10, 2600],
      ],
      ['ttft_p95_ms<=2000'],
    );
    expect(p.figures.ttft_p95_ms).toBe(1800);
    expect(p.feasible).toBe(true);
  });

  it('fails an SLO whose figure is missing in a seed, and names the worst miss as binding', () => {
    const p = point(
      0,
      {},
      [
        [1, null],
        [1, 900],
      ],
      ['ttft_p95_ms<=2000', 'goodput_rps>=2'],
    );
    expect(p.figures.ttft_p95_ms).toBeUndefined();
    expect(p.failed).toEqual(['ttft_p95_ms<=2000', 'goodput_rps>=2']);
    expect(p.binding).toBe('ttft_p95_ms<=2000');
  });

  it('clips the interval at 0 goodput', () => {
    expect(
      point(
        0,
        {},
        [
          [0, 1],
          [10, 1],
        ],
        [],
      ).ci_low,
    ).toBe(0);
  });
});

describe('ranking', () => {
  const slo = ['ttft_p95_ms<=2000'];
  const pts = [
    point(
      0,
      { fc_max_outstanding: 8 },
      [
        [5, 900],
        [5, 900],
      ],
      slo,
    ),
    point(
      1,
      { fc_max_outstanding: 16 },
      [
        [9, 1900],
        [11, 1900],
      ],
      slo,
    ),
    point(
      2,
      { fc_max_outstanding: 32 },
      [
        [20, 2500],
        [22, 2500],
      ],
      slo,
    ),
    point(
      3,
      { fc_max_outstanding: 64 },
      [
        [10, 1000],
        [10, 1000],
      ],
      slo,
    ),
  ];

  it('puts feasible points first by mean goodput, ties to the tighter interval, then infeasible ones', () => {
    const ranked = rankPoints(pts);
    expect(ranked.map((p) => p.rank)).toEqual([3, 2, 4, 1]);
  });

  it('recommends the best feasible point as the scenario rule with the point set', () => {
    const r = recommend(plan({ seeds: [1, 2] }), rankPoints(pts));
    expect(r.feasible).toBe(true);
    expect(r.params).toEqual({ fc_max_outstanding: 64 });
    expect(r.rule).toEqual({
      serviceArguments: { externalIP: '192.0.2.10', port: 8080, fc_mode: 'enforce', fc_max_outstanding: 64 },
    });
    expect(r.headline).toBe('fc_max_outstanding=64 gives 10 req/s goodput (95% CI 10–10) within every SLO');
    expect(r.notes).toEqual([
      '1 other point meeting every SLO has a goodput interval overlapping the best one: more --seeds would separate them.',
    ]);
  });

  it('gives SMG flags for an SMG scenario', () => {
    const smgPlan = plan({
      dialect: 'smg',
      base: { max_concurrent_requests: 256, queue_size: 128, queue_timeout_secs: 5 },
      vary: [{ field: 'max_concurrent_requests', values: [64] }],
      slo: [],
    });
    const r = recommend(smgPlan, rankPoints([point(0, { max_concurrent_requests: 64 }, [[3, 1]], [])]));
    expect(r.rule).toEqual({ smg: { max_concurrent_requests: 64, queue_size: 128, queue_timeout_secs: 5 } });
    expect(r.flags).toEqual(['--max-concurrent-requests 64', '--queue-size 128', '--queue-timeout-secs 5']);
    expect(r.notes).toEqual(['No --slo given: points are ranked by goodput alone.']);
  });
});

describe('when no point meets the SLOs', () => {
  const slo = ['ttft_p95_ms<=2000', 'shed_rate<=0.05'];
  const mk = (i: number, ttft: number, shed: number) =>
    pointResult(
      i,
      { fc_max_outstanding: 8 * (i + 1) },
      [figures({ goodput_rps: 10 + i, ttft_p95_ms: ttft, shed_rate: shed })],
      slo.map(parseSlo),
    );

  it('names the SLO whose relaxation would make the most points feasible', () => {
    const pts = [mk(0, 2500, 0.01), mk(1, 2200, 0.2), mk(2, 3000, 0.01)];
    const b = bindingConstraint(slo.map(parseSlo), pts);
    expect(b).toEqual({
      slo: 'ttft_p95_ms<=2000',
      missedBy: 3,
      missedOnlyBy: 2,
      closest: { params: { fc_max_outstanding: 16 }, value: 2200 },
    });
  });

  it('says so with the binding constraint and how close the grid came', () => {
    const pts = rankPoints([mk(0, 2500, 0.01), mk(1, 2200, 0.2), mk(2, 3000, 0.01)]);
    const r = recommend(plan({ slo }), pts);
    expect(r.feasible).toBe(false);
    expect(r.rule).toBeUndefined();
    expect(r.binding).toBe('ttft_p95_ms<=2000');
    expect(r.headline).toBe(
      'No point meets every SLO. ttft_p95_ms<=2000 binds: 3 of 3 points miss it, 2 of them miss nothing else; the closest is 2200 at fc_max_outstanding=16.',
    );
  });

  it('falls back to the SLO missed by the most points when every point misses several', () => {
    const pts = [mk(0, 2500, 0.5), mk(1, 1000, 0.2), mk(2, 3000, 0.3)];
    expect(bindingConstraint(slo.map(parseSlo), pts)?.slo).toBe('shed_rate<=0.05');
  });
});
