/**
 * Small synthetic run outputs for the report tests (and for trying the
 * report writer without the simulator): a run with a load spike that the
 * adaptive ceiling tightens against, a sweep and a cliff test.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary, SecondRow } from '../../sim/run/records.js';
import { formatTimeseriesCsv } from '../timeseries.js';
import type { CliffPoint, SweepData } from '../types.js';

/** `seconds` rows: load ramps into a spike in the middle third. */
export function fixtureSeconds(seconds = 60): SecondRow[] {
  const rows: SecondRow[] = [];
  for (let t = 0; t < seconds; t++) {
    const spike = t >= seconds / 3 && t < (2 * seconds) / 3;
    const tightened = spike && t >= seconds / 3 + 3;
    const limit = tightened ? 12 : 16;
    const inflight = Math.min(limit, spike ? 16 : 6 + (t % 5));
    const queued = spike ? 4 + (t % 4) : 0;
    rows.push({
      t_s: t,
      inflight,
      queued,
      limit,
      configured_limit: 16,
      queue_depth: 8,
      adapt_state: tightened ? 'tightened' : 'open',
      arrivals: spike ? 30 : 10,
      completed: spike ? 14 : 10,
      good: spike ? 9 : 10,
      ttft_p50_ms: t === 0 ? '' : spike ? 900 + t : 200 + t,
      ttft_p95_ms: t === 0 ? '' : spike ? 2400 + t : 450 + t,
      e2e_p50_ms: t === 0 ? '' : spike ? 5200 : 3100,
      e2e_p95_ms: t === 0 ? '' : spike ? 9100 : 5400,
      // Second 7 peaks between its marks: one more in flight and two queued for a moment.
      inflight_max: t === 7 ? inflight + 1 : inflight,
      queued_max: t === 7 ? queued + 2 : queued,
      decisions: spike
        ? { admitted: 14, queued: 6, capacity_shed: 8, queue_timeout: 2 }
        : { admitted: 10, queued: 0, capacity_shed: 0, queue_timeout: 0 },
      endpoints: [
        { id: 'ep-a', running: Math.ceil(inflight / 2), waiting: spike ? 2 : 0, kv_usage: spike ? 0.9 : 0.4 },
        { id: 'ep-b', running: Math.floor(inflight / 2), waiting: 0, kv_usage: 0.35 },
      ],
    });
  }
  return rows;
}

/** A summary consistent enough with fixtureSeconds for the report. */
export function fixtureSummary(): RunSummary {
  const pct = (p50: number, p95: number) => ({
    count: 900,
    p50,
    p95,
    p99: p95 * 1.2,
    max: p95 * 1.5,
    mean: p50 * 1.1,
  });
  return {
    scenario: 'spike <demo> & "friends"',
    seed: 7,
    dialect: 'loxilb',
    duration_s: 60,
    warmup_s: 5,
    measured_s: 55,
    offered: 1000,
    attempts: 1100,
    completed: 700,
    good: 620,
    goodput_rps: 11.27,
    throughput_rps: 12.73,
    goodput_share: 0.62,
    shed_rate: 0.145,
    decisions: { admitted: 740, queued: 120, capacity_shed: 160, queue_timeout: 40 },
    sheds: { '429 admission_capacity': 160, '504 admission_queue_timeout': 40 },
    outcomes: { completed: 700, shed: 160, timed_out: 40, cancelled: 30, in_system: 170 },
    ttft_ms: pct(320, 2400),
    e2e_ms: pct(3400, 9100),
    tpot_ms: pct(9, 14),
    itl_ms: pct(8, 31),
    output_tokens_per_s: 1640,
    request_throughput_per_s: 12.73,
    queue_wait_ms: pct(120, 1900),
    max_inflight: 16,
    max_queued: 7,
    ceilings: { max_outstanding: 16, queue_depth: 8, queue_wait_ms: 2000 },
    anomalies: {},
    tenants: [
      { tenant: 'acme, inc.', offered: 600, completed: 420, good: 400, goodput_rps: 7.27, good_share: 0.667 },
      { tenant: 'beta', offered: 300, completed: 220, good: 180, goodput_rps: 3.27, good_share: 0.6 },
      {
        tenant: '<script>x</script>',
        offered: 100,
        completed: 60,
        good: 40,
        goodput_rps: 0.73,
        good_share: 0.4,
      },
    ],
    jain_fairness: 0.93,
    wasted_tokens: 12345,
    retry_amplification: 1.1,
    conservation_ok: true,
    events: 54321,
  };
}

/** Writes summary.json and timeseries.csv into `dir` (created). */
export function writeFixtureRun(dir: string, seconds = 60): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(fixtureSummary(), null, 2)}\n`);
  writeFileSync(join(dir, 'timeseries.csv'), formatTimeseriesCsv(fixtureSeconds(seconds)));
}

/** A 3 x 3 sweep over two fields. */
export function fixtureSweep(): SweepData {
  const points = [8, 16, 32].flatMap((mo) =>
    [0, 16, 64].map((qd) => {
      const goodput = Math.round((mo * 1.1 + qd * 0.05 - (mo === 32 && qd === 64 ? 12 : 0)) * 10) / 10;
      const feasible = !(mo === 32 && qd === 64) && mo >= 16;
      return {
        params: { fc_max_outstanding: mo, fc_max_queue_depth: qd },
        goodput_rps: goodput,
        ci_low: goodput - 0.8,
        ci_high: goodput + 0.8,
        feasible,
        ...(feasible ? {} : { binding: mo < 16 ? 'shed_rate<=0.05' : 'ttft_p95_ms<=2000' }),
        figures: { ttft_p95_ms: 500 + mo * 40 + qd * 10, shed_rate: mo < 16 ? 0.2 : 0.01 },
      };
    }),
  );
  return {
    scenario: 'spike',
    varied: ['fc_max_outstanding', 'fc_max_queue_depth'],
    slo: ['ttft_p95_ms<=2000', 'shed_rate<=0.05'],
    seeds: 3,
    points,
    recommendation: {
      feasible: true,
      headline: 'fc_max_outstanding=32, fc_max_queue_depth=16 gives 36 rps (35.2–36.8) within every SLO',
      params: { fc_max_outstanding: 32, fc_max_queue_depth: 16 },
      rule: { serviceArguments: { fc_mode: 'enforce', fc_max_outstanding: 32, fc_max_queue_depth: 16 } },
    },
  };
}

/** Three modes at four offered loads: goodput plateaus with the gate, collapses without. */
export function fixtureCliff(): CliffPoint[] {
  const loads = [10, 20, 40, 80];
  return loads.flatMap((offered) => [
    {
      mode: 'off' as const,
      offered_rps: offered,
      goodput_rps: offered <= 20 ? offered * 0.98 : 20 * (40 / offered),
      throughput_rps: Math.min(offered, 24),
      shed_rate: 0,
      ttft_p95_ms: offered <= 20 ? 600 : 6000,
    },
    {
      mode: 'observe' as const,
      offered_rps: offered,
      goodput_rps: offered <= 20 ? offered * 0.97 : 19 * (40 / offered),
      throughput_rps: Math.min(offered, 24),
      shed_rate: 0,
      ttft_p95_ms: offered <= 20 ? 620 : 6100,
    },
    {
      mode: 'enforce' as const,
      offered_rps: offered,
      goodput_rps: Math.min(offered * 0.97, 19.5),
      throughput_rps: Math.min(offered, 20),
      shed_rate: offered <= 20 ? 0 : 1 - 20 / offered,
      ttft_p95_ms: offered <= 20 ? 600 : 1500,
    },
  ]);
}
