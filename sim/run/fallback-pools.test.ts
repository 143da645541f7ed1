/**
 * Pool degrades in the simulator (sim/run/fallback-pools.ts): a request the policy degrades to a
 * fallback pool runs on that pool's engines, past the gate, counted under its mode; while no pool
 * is available (maintenance) the policy goes on to its next degrade option or disposition, as
 * decide.ts does; and the run stays byte-identical for a seed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicySnapshot } from '../../gate/index.js';
import { loadScenario } from '../scenario/load.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { FileSink, MemorySink } from './sinks.js';

/** One 8B engine behind 4 seats; a class whose overflow degrades to `small` first. */
const POLICY = (degrade: string) => `version: 1
capacity_seats: 6
estimator: { prompt_tokens_per_seat: 4000, output_tokens_per_seat: 100, min_seats: 1, max_seats: 4 }
classes:
  chat:
    priority: 100
    guaranteed_seats: 6
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 10000 }
    degrade:
${degrade}
    defer: { enabled: true, max_backlog: 1000, drain_per_s: 5 }
envelope: { default_class: chat }
`;

const SCENARIO = (timeline = '') => `name: fp
seed: 3
duration_s: 40
warmup_s: 0
gate:
  policy: policy.yaml
  fallback_pools:
    small:
      engines: [{ profile: llama-3.1-8b-h100, count: 2, max_num_seqs: 16 }]
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  arrival: { kind: poisson, rate_per_sec: 6 }
  prompt_tokens: { kind: fixed, value: 500 }
  output_tokens: { kind: uniform, low: 50, high: 400 }
  envelope: { class: chat }
${timeline}`;

const POOL_FIRST = '      - { kind: pool, pool: small }\n      - { kind: max_tokens, max_output_tokens: 60 }';

async function run(
  scenario: string,
  policy: string,
): Promise<{ s: RunSummary; recs: RequestRecord[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fallback-'));
  writeFileSync(join(dir, 's.yaml'), scenario);
  writeFileSync(join(dir, 'policy.yaml'), policy);
  const sink = new MemorySink(true);
  const s = await runScenario(await loadScenario(join(dir, 's.yaml')), { sink });
  return { s, recs: sink.requests, dir };
}

const FALLBACK_IDS = new Set(['10.100.0.1:8000', '10.100.0.2:8000']);
const byMode = (s: RunSummary): Record<string, number> | undefined =>
  (s.policy?.scorecard as PolicySnapshot | undefined)?.classes.chat?.degraded_by_mode;

describe('a pool degrade in the simulator', () => {
  it('runs a degraded request on the fallback engines, past the gate, counted under its mode', async () => {
    const { s, recs } = await run(SCENARIO(), POLICY(POOL_FIRST));
    expect(s.conservation_ok).toBe(true);
    const pooled = recs.filter((r) => r.reason === 'pool_small');
    const elsewhere = recs.filter((r) => r.reason !== 'pool_small');
    // The overload is real: a good share of the 240 requests find the 4 seats taken.
    expect(pooled.length).toBeGreaterThan(50);
    for (const r of pooled) {
      expect(r.disposition).toBe('degrade');
      expect(r.decision).toBe('bypass');
      // A pool degrade keeps the request's own max_tokens: only a max_tokens degrade caps it.
      expect(r.generated_tokens === r.output_tokens || r.outcome !== 'completed').toBe(true);
      if (r.outcome !== 'in_system') expect(FALLBACK_IDS.has(r.endpoint)).toBe(true);
    }
    // Both fallback engines take work (round-robin); nothing else runs on them.
    expect(new Set(pooled.map((r) => r.endpoint))).toEqual(FALLBACK_IDS);
    for (const r of elsewhere) expect(FALLBACK_IDS.has(r.endpoint)).toBe(false);
    // The pool is available throughout, and listed first: no max_tokens degrade happens.
    expect(recs.filter((r) => (r.reason ?? '').startsWith('max_tokens')).length).toBe(0);
    // The scorecard's per-mode count and the pool's own figures agree with the records.
    expect(byMode(s)).toEqual({ 'pool:small': pooled.length });
    const f = s.policy?.fallback_pools?.small;
    expect(f).toMatchObject({ engines: 2, sent: pooled.length });
    expect(f?.completed).toBe(pooled.filter((r) => r.outcome === 'completed').length);
    expect(f?.useful_on_time).toBe(pooled.filter((r) => r.useful === true).length);
    expect(f?.in_system_at_end).toBe(pooled.filter((r) => r.outcome === 'in_system').length);
  });

  it('goes on to the next degrade option, then the next disposition, while no pool is available', async () => {
    const maint =
      'timeline:\n  - { at_s: 10, event: maintenance, enabled: true }\n  - { at_s: 25, event: maintenance, enabled: false }\n';
    const sentIn = (r: RequestRecord, a: number, b: number) => r.sent_ms >= a && r.sent_ms < b;
    // Pool first, then max_tokens: in maintenance (no pool available) the max_tokens option is used.
    const two = await run(SCENARIO(maint), POLICY(POOL_FIRST));
    const inMaint = two.recs.filter((r) => sentIn(r, 10_000, 25_000));
    const outside = two.recs.filter((r) => !sentIn(r, 10_000, 25_000));
    expect(inMaint.filter((r) => r.reason === 'pool_small')).toEqual([]);
    expect(inMaint.filter((r) => r.reason === 'max_tokens_60').length).toBeGreaterThan(0);
    expect(outside.filter((r) => r.reason === 'pool_small').length).toBeGreaterThan(20);
    // Pool only: in maintenance the class defers (its next disposition) instead.
    const one = await run(SCENARIO(maint), POLICY('      - { kind: pool, pool: small }'));
    const m1 = one.recs.filter((r) => sentIn(r, 10_000, 25_000));
    expect(m1.filter((r) => r.reason === 'pool_small')).toEqual([]);
    expect(m1.filter((r) => r.disposition === 'defer').length).toBeGreaterThan(10);
    expect(
      one.recs.filter((r) => !sentIn(r, 10_000, 25_000) && r.reason === 'pool_small').length,
    ).toBeGreaterThan(20);
  });

  it('is deterministic: the same scenario and seed give byte-identical outputs', async () => {
    const outs: string[][] = [];
    // One directory: the summary names the policy file by its path.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fallback-det-'));
    writeFileSync(join(dir, 's.yaml'), SCENARIO());
    writeFileSync(join(dir, 'policy.yaml'), POLICY(POOL_FIRST));
    for (let k = 0; k < 2; k++) {
      const out = join(dir, `out${k}`);
      const sc = await loadScenario(join(dir, 's.yaml'));
      const sink = new FileSink(
        out,
        sc.endpoints.map((e) => e.id),
        { classColumns: true },
      );
      await runScenario(sc, { sink });
      outs.push(['summary.json', 'requests.csv'].map((f) => readFileSync(join(out, f), 'utf8')));
    }
    expect(outs[1]).toEqual(outs[0]);
    expect(outs[0]![1]).toContain('10.100.0.2:8000');
  });
});
