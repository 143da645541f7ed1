import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sluiceProcess } from '../cli/test/process.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { loadScenario } from '../sim/scenario/load.js';
import type { CliffStep } from './cliff.js';
import { UnsupportedScenarioError } from './errors.js';
import { comparisonTable } from './report.js';
import { runSimulatedCliff } from './simulated.js';

const CLIFF_SCENARIO = join(REPO_ROOT, 'cliff', 'cliff-mm8.yaml');
const SMG = join(REPO_ROOT, 'scenarios', 'smg-dialect.yaml');
const dir = mkdtempSync(join(tmpdir(), 'sluice-simcliff-'));
/** `sluice cliff` on cliff-mm8 in short steps (2 s at time scale 5), writing to `out`, as JSON. */
const shortCliff = (out: string, ...flags: string[]): string[] => [
  'cliff',
  '--scenario',
  CLIFF_SCENARIO,
  ...flags,
  '--step-s',
  '2',
  '--time-scale',
  '5',
  '--out',
  out,
  '--json',
];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the cliff in the simulator', () => {
  // The real CI cliff's settings (cliff.test.ts): 2 s steps at time scale 5 = 10 engine seconds.
  const common = { timeScale: 5, stepS: 2, rates: [8, 24, 40] };

  it('runs every mode at every rate: enforce keeps goodput past saturation, off and observe lose it', async () => {
    const r = await runSimulatedCliff(await loadScenario(CLIFF_SCENARIO), common);
    expect(r.steps.map((s) => [s.line, s.offered_rps])).toEqual([
      ['off', 8],
      ['off', 24],
      ['off', 40],
      ['observe', 8],
      ['observe', 24],
      ['observe', 40],
      ['enforce', 8],
      ['enforce', 24],
      ['enforce', 40],
    ]);
    expect(r.points).toHaveLength(9);
    const at = (line: string, rate: number) =>
      r.steps.find((s) => s.line === line && s.offered_rps === rate)!;
    // Past saturation (16 req/s) enforce sheds and keeps most of the engine's goodput ...
    expect(at('enforce', 40).shed_rate).toBeGreaterThan(0.3);
    expect(at('enforce', 40).goodput_rps).toBeGreaterThan(8);
    // ... while with no gate nothing is shed and the queue eats the SLOs.
    expect(at('off', 40).shed_rate).toBe(0);
    expect(at('off', 40).goodput_rps).toBeLessThan(at('enforce', 40).goodput_rps / 2);
    // Observe decides but never acts: its traffic is the gate-off traffic, request for request.
    for (const rate of common.rates) {
      const { line: _o, mode: _m, ...off } = at('off', rate);
      const { line: _l, mode: _n, ...observe } = at('observe', rate);
      expect(observe).toEqual(off);
    }
    for (const s of r.steps) expect(s.anomalies).toBe(0);
    expect(r.scenario).toBe('cliff-mm8 (simulated)');
    expect(r.notes[0]).toMatch(/^simulated: each step is 10 s of engine time/);
  });

  it('is deterministic: the same scenario, flags and seed give the same steps', async () => {
    const s = await loadScenario(CLIFF_SCENARIO);
    const o = { ...common, modes: ['enforce' as const], seed: 7 };
    expect(await runSimulatedCliff(s, o)).toEqual(await runSimulatedCliff(s, o));
  });

  it('runs the SMG dialect as one enforce line and refuses other modes for it', async () => {
    const s = await loadScenario(SMG);
    const r = await runSimulatedCliff(s, { rates: [4], stepS: 4 });
    expect(r.steps.map((x) => x.line)).toEqual(['enforce']);
    await expect(runSimulatedCliff(s, { rates: [4], modes: ['off', 'enforce'] })).rejects.toThrow(
      UnsupportedScenarioError,
    );
  });
});

describe('sluice cliff --simulate', () => {
  it('writes the cliff report and prints the steps as JSON', async () => {
    const out = join(dir, 'cliff');
    const r = await sluiceProcess(shortCliff(out, '--simulate', '--rates', '8:40:16'));
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { steps: { line: string }[] };
    expect(json.steps).toHaveLength(9);
    expect(readFileSync(join(out, 'report', 'cliff.csv'), 'utf8').split('\n')[0]).toContain('offered');
    expect(JSON.parse(readFileSync(join(out, 'cliff.json'), 'utf8')).scenario).toBe('cliff-mm8 (simulated)');
  });

  it('exits 2 naming the flags that only a real cliff has', async () => {
    const r = await sluiceProcess([
      'cliff',
      '--scenario',
      CLIFF_SCENARIO,
      '--simulate',
      '--haproxy',
      '--engines',
      '2',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "--simulate: --engines, --haproxy only apply to a real cliff (the simulator runs the scenario's engines)",
    );
  });
});

describe('the real-against-simulated table', () => {
  const step = (line: CliffStep['line'], rate: number, goodput: number, ttft: number | null): CliffStep => ({
    mode: line,
    line,
    offered_rps: rate,
    goodput_rps: goodput,
    throughput_rps: goodput,
    shed_rate: 0.5,
    ttft_p95_ms: ttft,
    ttft_p50_ms: ttft,
    goodput_share: 0,
    offered: 1,
    attempts: 1,
    sheds: {},
    sends: 1,
    late_sends: 0,
    lag_p99_ms: 0,
    lag_max_ms: 0,
    late_share: 0,
    max_late_share: 0.01,
    valid: true,
    transport_errors: 0,
    inflight_after: 0,
    anomalies: 0,
  });

  it('puts each real step beside the simulated step of the same line and rate, real minus simulated', () => {
    const t = comparisonTable(
      [step('enforce', 40, 10.84, 2184.47), step('haproxy', 40, 13, 1900), step('off', 40, 0, null)],
      [step('off', 40, 0, 4998.79), step('enforce', 40, 13.47, 1865.32)],
    );
    if (t.kind !== 'table') throw new Error('not a table');
    expect(t.rows).toEqual([
      ['enforce', 40, 10.84, 13.47, -2.63, 0.5, 0.5, 2184.47, 1865.32, 319.15],
      ['gate off', 40, 0, 0, 0, 0.5, 0.5, '-', 4998.79, '-'],
    ]);
  });
});

describe('sluice cliff --compare-simulated', () => {
  it('runs the real cliff and the simulated one, and the report puts them side by side', async () => {
    const out = join(dir, 'compare');
    const r = await sluiceProcess(
      // The layout is under test, not the driver's lateness on a loaded machine (exit 3 otherwise).
      shortCliff(out, '--compare-simulated', '--modes', 'enforce', '--rates', '8', '--max-late-share', '1'),
    );
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { steps: CliffStep[]; simulated: { steps: CliffStep[] } };
    expect(json.steps.map((s) => s.line)).toEqual(['enforce']);
    expect(json.simulated.steps.map((s) => s.line)).toEqual(['enforce']);
    const md = readFileSync(join(out, 'report', 'report.md'), 'utf8');
    expect(md).toContain('## Real against simulated');
    expect(md).toMatch(/\| enforce \| 8 \| [\d.]+ \| [\d.]+ \|/);
  }, 40_000);

  it('exits 2 with flags that give the real run other engines than the scenario', async () => {
    const r = await sluiceProcess([
      'cliff',
      '--scenario',
      CLIFF_SCENARIO,
      '--compare-simulated',
      '--engines',
      '2',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "--compare-simulated: not with --engines (the simulator runs the scenario's own engines)",
    );
  });
});
