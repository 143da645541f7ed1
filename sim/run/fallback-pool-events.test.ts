/**
 * Timeline events on a fallback pool's engines (`pool: NAME` on endpoint_down, endpoint_up, flap, capacity_loss,
 * engine_slowdown): the pool's only engine going down mid-overload takes the pool out of
 * `availablePools` (gate/policy/pool-availability.ts), so the policy takes its next degrade
 * option or its next disposition (decide.ts) until endpoint_up; the requests on the engine at the
 * down instant fail, counted in the pool's `failed`; the run stays byte-identical for a seed;
 * and the loader refuses a bad `pool` or a selector outside that pool.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isScenarioError } from '../scenario/errors.js';
import { loadScenario } from '../scenario/load.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { FileSink, MemorySink } from './sinks.js';

/** One 8B engine behind 6 seats; a class whose overflow degrades as `degrade` says, then defers. */
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

const POOL_FIRST = '      - { kind: pool, pool: small }\n      - { kind: max_tokens, max_output_tokens: 60 }';
const POOL_ONLY = '      - { kind: pool, pool: small }';

/** The fallback pool `small` has one engine; the main pool two (so index 1 is the main pool's only). */
const SCENARIO = (timeline: string, pools = POOLS) => `name: fpe
seed: 5
duration_s: 40
warmup_s: 0
gate:
  policy: policy.yaml
${pools}  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - profile: llama-3.1-8b-h100
    count: 2
clients:
  arrival: { kind: poisson, rate_per_sec: 8 }
  prompt_tokens: { kind: fixed, value: 500 }
  output_tokens: { kind: uniform, low: 100, high: 500 }
  envelope: { class: chat }
${timeline}`;
const POOLS = `  fallback_pools:
    small:
      engines: [{ profile: llama-3.1-8b-h100, count: 1, max_num_seqs: 16 }]
`;

/** The pool's engine is down from 15 s to 25 s. */
const OUTAGE = `timeline:
  - { at_s: 15, event: endpoint_down, pool: small, endpoints: [0] }
  - { at_s: 25, event: endpoint_up, pool: small, endpoints: ["10.100.0.1:8000"] }
`;

function write(scenario: string, policy: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fpe-'));
  writeFileSync(join(dir, 's.yaml'), scenario);
  writeFileSync(join(dir, 'policy.yaml'), policy);
  return dir;
}

async function run(scenario: string, policy: string): Promise<{ s: RunSummary; recs: RequestRecord[] }> {
  const sink = new MemorySink(true);
  const s = await runScenario(await loadScenario(join(write(scenario, policy), 's.yaml')), { sink });
  return { s, recs: sink.requests };
}

const sentIn = (r: RequestRecord, a: number, b: number) => r.sent_ms >= a && r.sent_ms < b;
const POOL_ID = '10.100.0.1:8000';

describe('timeline events on a fallback pool', () => {
  it('resolves the selectors against the pool: its indexes, IP:port ids and groups', async () => {
    const sc = await loadScenario(join(write(SCENARIO(OUTAGE), POLICY(POOL_FIRST)), 's.yaml'));
    // The pool's engine has run-wide index 2 (after the main pool's 0 and 1).
    expect(sc.fallbackPools?.[0]?.endpoints.map((e) => [e.index, e.id])).toEqual([[2, POOL_ID]]);
    expect(sc.timeline.map((e) => ('endpoints' in e ? e.endpoints : []))).toEqual([[2], [2]]);
    // A group name of the pool, and no endpoints (all of the pool's), resolve to its engine too.
    const group = sc.fallbackPools?.[0]?.engines[0]?.name;
    const tl = `timeline:\n  - { at_s: 5, event: engine_slowdown, pool: small, factor: 2, endpoints: [${group}] }\n  - { at_s: 6, event: engine_slowdown, pool: small, factor: 2 }\n`;
    const sc2 = await loadScenario(join(write(SCENARIO(tl), POLICY(POOL_FIRST)), 's.yaml'));
    expect(sc2.timeline.map((e) => ('endpoints' in e ? e.endpoints : []))).toEqual([[2], [2]]);
  });

  it('takes the pool away while its only engine is down: next degrade option, then back after endpoint_up', async () => {
    const { s, recs } = await run(SCENARIO(OUTAGE), POLICY(POOL_FIRST));
    expect(s.conservation_ok).toBe(true);
    const during = recs.filter((r) => sentIn(r, 15_000, 25_000));
    const before = recs.filter((r) => sentIn(r, 0, 15_000));
    const after = recs.filter((r) => sentIn(r, 25_000, 40_000));
    // The overload degrades to the pool before and after the outage...
    expect(before.filter((r) => r.reason === 'pool_small').length).toBeGreaterThan(20);
    expect(after.filter((r) => r.reason === 'pool_small').length).toBeGreaterThan(20);
    // ...and never during it: the max_tokens option takes the overflow instead.
    expect(during.filter((r) => r.reason === 'pool_small')).toEqual([]);
    expect(during.filter((r) => r.reason === 'max_tokens_60').length).toBeGreaterThan(10);
    expect(before.filter((r) => r.reason === 'max_tokens_60')).toEqual([]);
    // Nothing runs on the pool's engine while it is down.
    for (const r of recs)
      if (r.endpoint === POOL_ID && r.outcome === 'completed')
        expect(r.sent_ms + Number(r.e2e_ms) <= 15_000 || r.sent_ms >= 25_000).toBe(true);
    // The requests on the engine at the down instant fail, lost with it, and the pool counts them.
    const lost = recs.filter((r) => r.reason === 'pool_small' && r.outcome === 'failed');
    expect(lost.length).toBeGreaterThan(0);
    for (const r of lost) {
      expect(r.sent_ms).toBeLessThan(15_000);
      // On the engine (engine_lost), or on the way to it (engine_down), at the down instant.
      expect(['engine_lost', 'engine_down']).toContain(r.error);
      expect(r.status).toBe(502);
    }
    expect(lost.filter((r) => r.error === 'engine_lost').length).toBeGreaterThan(0);
    const f = s.policy?.fallback_pools?.small;
    expect(f?.failed).toBe(lost.length);
    expect(f?.sent).toBe(recs.filter((r) => r.reason === 'pool_small').length);
  });

  it('goes on to the next disposition while the pool is down when no other degrade option is declared', async () => {
    const { recs } = await run(SCENARIO(OUTAGE), POLICY(POOL_ONLY));
    const during = recs.filter((r) => sentIn(r, 15_000, 25_000));
    expect(during.filter((r) => r.reason === 'pool_small')).toEqual([]);
    expect(during.filter((r) => r.disposition === 'defer').length).toBeGreaterThan(10);
    expect(recs.filter((r) => sentIn(r, 0, 15_000) && r.disposition === 'defer')).toEqual([]);
    expect(recs.filter((r) => sentIn(r, 25_000, 40_000) && r.reason === 'pool_small').length).toBeGreaterThan(
      20,
    );
  });

  it('slows only the pool engine with engine_slowdown pool: the main pool runs as without it', async () => {
    const slow = `timeline:\n  - { at_s: 0, event: engine_slowdown, pool: small, factor: 4 }\n`;
    const base = await run(SCENARIO(''), POLICY(POOL_FIRST));
    const slowed = await run(SCENARIO(slow), POLICY(POOL_FIRST));
    const main = (rs: RequestRecord[]) => rs.filter((r) => r.endpoint !== POOL_ID);
    // Mean time sent → end of the pool's completed requests, ms.
    const poolE2e = (rs: RequestRecord[]) => {
      const done = rs.filter((r) => r.endpoint === POOL_ID && r.outcome === 'completed');
      return done.reduce((a, r) => a + Number(r.e2e_ms), 0) / done.length;
    };
    expect(main(slowed.recs)).toEqual(main(base.recs));
    expect(poolE2e(slowed.recs)).toBeGreaterThan(2 * poolE2e(base.recs));
  });

  it('is deterministic: byte-identical outputs for the same scenario and seed', async () => {
    const dir = write(
      SCENARIO(
        `${OUTAGE}  - { at_s: 30, event: flap, pool: small, endpoints: [0], period_s: 4, count: 2 }\n`,
      ),
      POLICY(POOL_FIRST),
    );
    const outs: string[][] = [];
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
    expect(outs[0]![1]).toContain(POOL_ID);
  });
});

describe('validation of an event pool', () => {
  async function issues(
    timeline: string,
    pools = POOLS,
  ): Promise<{ path: string; value: unknown; expected: string; message: string }[]> {
    const err = await loadScenario(
      join(write(SCENARIO(timeline, pools), POLICY(POOL_FIRST)), 's.yaml'),
    ).catch((e: unknown) => e);
    if (!isScenarioError(err)) throw new Error('expected a ScenarioError');
    return err.issues.map(({ path, value, expected, message }) => ({ path, value, expected, message }));
  }

  it('refuses an unknown pool name, listing the declared ones', async () => {
    const got = await issues('timeline:\n  - { at_s: 5, event: endpoint_down, pool: big, endpoints: [0] }\n');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      path: 'timeline[0].pool',
      value: 'big',
      expected: 'one of the declared pools: small',
    });
    expect(got[0]?.message).toContain('"big" is not a pool of gate.fallback_pools');
  });

  it('refuses pool without gate.fallback_pools', async () => {
    // Without any fallback pool the policy's pool degrade is refused too; the event's issue is ours.
    const got = await issues(
      'timeline:\n  - { at_s: 5, event: endpoint_up, pool: small, endpoints: [0] }\n',
      '',
    );
    const ours = got.filter((i) => i.path.startsWith('timeline'));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({ path: 'timeline[0].pool', value: 'small' });
    expect(ours[0]?.message).toContain('the scenario declares none (gate.fallback_pools)');
  });

  it('refuses a selector outside the pool, even one the main pool has', async () => {
    const got = await issues(
      'timeline:\n  - { at_s: 5, event: flap, pool: small, endpoints: [1, "10.0.0.1:8000"], period_s: 2, count: 1 }\n',
    );
    expect(got.map((i) => [i.path, i.value, i.expected])).toEqual([
      ['timeline[0].endpoints[0]', 1, 'an index from 0 to 0'],
      [
        'timeline[0].endpoints[1]',
        '10.0.0.1:8000',
        expect.stringContaining('an endpoint index, IP:port or one of the groups'),
      ],
    ]);
    expect(got[0]?.message).toContain('1 is not an endpoint index (fallback pool small has 1)');
    expect(got[1]?.message).toContain('nor an engine group of fallback pool small');
  });

  it('loses a share of the pool with capacity_loss pool: the last of its engines, not the main pool', async () => {
    const two = `  fallback_pools:\n    small:\n      engines: [{ profile: llama-3.1-8b-h100, count: 2, max_num_seqs: 16 }]\n`;
    const tl = 'timeline:\n  - { at_s: 15, event: capacity_loss, pool: small, share: 0.5, duration_s: 10 }\n';
    const sc = await loadScenario(join(write(SCENARIO(tl, two), POLICY(POOL_FIRST)), 's.yaml'));
    // The pool's engines are run-wide 2 and 3; half of them is the last one, 3.
    expect(sc.fallbackPools?.[0]?.endpoints.map((e) => e.index)).toEqual([2, 3]);
    expect(sc.timeline.map((e) => ('endpoints' in e ? e.endpoints : []))).toEqual([[3]]);
    const { s, recs } = await run(SCENARIO(tl, two), POLICY(POOL_FIRST));
    expect(s.conservation_ok).toBe(true);
    // One engine of the pool stays up: the pool stays available, degrades go on during the loss...
    expect(recs.filter((r) => sentIn(r, 15_000, 25_000) && r.reason === 'pool_small').length).toBeGreaterThan(
      10,
    );
    // ...to the engine left, while the lost one runs nothing.
    const lostId = sc.fallbackPools?.[0]?.endpoints[1]?.id;
    for (const r of recs)
      if (r.endpoint === lostId && r.outcome === 'completed')
        expect(r.sent_ms + Number(r.e2e_ms) <= 15_000 || r.sent_ms >= 25_000).toBe(true);
    // The main pool lost nothing.
    expect(recs.filter((r) => !r.reason?.startsWith('pool_') && r.outcome === 'failed')).toEqual([]);
  });

  it('refuses capacity_loss pool naming no declared pool', async () => {
    const got = await issues('timeline:\n  - { at_s: 5, event: capacity_loss, pool: big, share: 0.5 }\n');
    expect(got.map((i) => i.path)).toEqual(['timeline[0].pool']);
  });

  it('still refuses pool on an event that takes none (scrape_outage)', async () => {
    const got = await issues(
      'timeline:\n  - { at_s: 5, event: scrape_outage, pool: small, duration_s: 3 }\n',
    );
    expect(got).toHaveLength(1);
    expect(got[0]?.path).toBe('timeline[0].pool');
  });
});
