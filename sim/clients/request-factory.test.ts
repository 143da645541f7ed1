import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { RequestFactory } from './request-factory.js';
import type { RandomStreams } from './rng.js';
import { createWorkloadArrivals, resolveTenants, type WorkloadConfig } from './tenants.js';

const streams =
  (seed: string): RandomStreams =>
  (name) =>
    seedrandom(`${seed}/${name}`);

const mix: WorkloadConfig = {
  promptTokens: { kind: 'fixed', value: 100 },
  outputTokens: { kind: 'uniform', low: 10, high: 20 },
  tenants: [
    { id: 'chat', weight: 3, streamShare: 1, h2Share: 0.5, deadlineMs: 30_000, ttftSloMs: 2000 },
    { id: 'batch', weight: 1, streamShare: 0, pdShare: 1, outputTokens: { kind: 'fixed', value: 500 } },
    { weight: 0, nonInferenceShare: 1 },
  ],
};

describe('request factory', () => {
  it('draws tenants by weight and applies their shapes', () => {
    const f = new RequestFactory(mix, streams('x'));
    const reqs = Array.from({ length: 20_000 }, (_, i) => f.create(i));
    const chat = reqs.filter((r) => r.tenant === 'chat');
    const batch = reqs.filter((r) => r.tenant === 'batch');
    expect(chat.length + batch.length).toBe(20_000);
    expect(Math.abs(chat.length / 15_000 - 1)).toBeLessThan(0.02);
    expect(
      chat.every((r) => r.stream && r.promptTokens === 100 && r.outputTokens >= 10 && r.outputTokens <= 20),
    ).toBe(true);
    expect(Math.abs(chat.filter((r) => r.protocol === 'h2').length / chat.length - 0.5)).toBeLessThan(0.02);
    expect(batch.every((r) => !r.stream && r.pd && r.outputTokens === 500 && r.protocol === 'http1')).toBe(
      true,
    );
  });

  it('numbers attempts and logical requests from 1 and sets the absolute deadline', () => {
    const f = new RequestFactory(mix, streams('x'));
    const r = f.create(5000, 0);
    expect(r).toMatchObject({
      id: 1,
      logicalId: 1,
      attempt: 1,
      tenant: 'chat',
      inference: true,
      sentAtMs: 5000,
      firstSentAtMs: 5000,
      deadlineMs: 35_000,
      ttftSloMs: 2000,
    });
    expect(f.create(6000, 1).deadlineMs).toBeUndefined();
  });

  it('keeps the logical id, tokens, tenant and deadline across retries, counting attempts', () => {
    const f = new RequestFactory(mix, streams('x'));
    const first = f.create(0, 0);
    f.create(10, 1);
    const second = f.retry(first, 1500);
    const third = f.retry(second, 4000);
    expect(third).toEqual({ ...first, id: 4, attempt: 3, sentAtMs: 4000 });
    expect(f.attempts).toBe(4);
    expect(f.logicalRequests).toBe(2);
  });

  it('makes keyless non-inference requests with no tokens', () => {
    const f = new RequestFactory(mix, streams('x'));
    const r = f.create(0, 2);
    expect(r).toMatchObject({
      tenant: undefined,
      inference: false,
      promptTokens: 0,
      outputTokens: 0,
      stream: false,
      pd: false,
    });
  });

  it('is deterministic per seed, and a share change does not shift token samples', () => {
    const tokens = (w: WorkloadConfig, seed: string) => {
      const f = new RequestFactory(w, streams(seed));
      return Array.from({ length: 200 }, (_, i) => f.create(i, 0).outputTokens);
    };
    expect(tokens(mix, 'x')).toEqual(tokens(mix, 'x'));
    expect(tokens(mix, 'y')).not.toEqual(tokens(mix, 'x'));
    expect(tokens({ ...mix, h2Share: 1, streamShare: 0 }, 'x')).toEqual(tokens(mix, 'x'));
  });

  it('takes tokens, prefix blocks and tenant from a trace record', () => {
    const f = new RequestFactory({ streamShare: 0, deadlineMs: 1000 }, streams('x'));
    const r = f.fromTrace({
      atMs: 7,
      promptTokens: 6758,
      outputTokens: 500,
      prefixHashIds: [0, 1],
      tenant: 'acme',
      line: 1,
    });
    expect(r).toMatchObject({
      tenant: 'acme',
      promptTokens: 6758,
      outputTokens: 500,
      prefixHashIds: [0, 1],
      sentAtMs: 7,
      deadlineMs: 1007,
      stream: false,
    });
    expect(f.fromTrace({ atMs: 8, promptTokens: 1, outputTokens: 2, line: 2 }, 100).tenant).toBeUndefined();
  });
});

describe('tenants', () => {
  it('default to one keyless tenant with 512/128 fixed tokens and streaming on', () => {
    const [t] = resolveTenants({});
    expect(t).toMatchObject({
      id: undefined,
      label: 'keyless',
      streamShare: 1,
      h2Share: 0,
      pdShare: 0,
      nonInferenceShare: 0,
    });
    expect(t?.prompt.median).toBe(512);
    expect(t?.output.median).toBe(128);
  });

  it('reject duplicates, bad shares and a partial set of own arrivals', () => {
    expect(() => resolveTenants({ tenants: [{ id: 'a' }, { id: 'a' }] })).toThrow(
      'workload.tenants[1].id: "a" is not unique among the tenants',
    );
    expect(() => resolveTenants({ tenants: [{}, {}] })).toThrow(
      'workload.tenants[1].id: undefined is not set (only one tenant may be keyless)',
    );
    expect(() => resolveTenants({ tenants: [{ id: 'a', h2Share: 1.5 }] })).toThrow(
      'workload.tenants[0].h2Share: 1.5 is not a share between 0 and 1',
    );
    expect(() =>
      resolveTenants({ tenants: [{ id: 'a', arrival: { kind: 'constant', ratePerSec: 1 } }, { id: 'b' }] }),
    ).toThrow('workload.tenants: "1 of 2 with an arrival" is not all or none with an arrival');
  });

  it('merge per-tenant arrival processes, tagging each arrival with its tenant', () => {
    const arrivals = createWorkloadArrivals(
      {
        tenants: [
          { id: 'quiet', arrival: { kind: 'constant', ratePerSec: 1, durationMs: 3000 } },
          {
            id: 'noisy',
            arrival: { kind: 'spike', baseRatePerSec: 0, durationMs: 3000, spikeAtMs: 1000, spikeCount: 2 },
          },
        ],
      },
      streams('x'),
    );
    const out = [];
    for (let a = arrivals?.next(); a !== undefined; a = arrivals?.next()) out.push(a);
    expect(out).toEqual([
      { atMs: 0, tenantIndex: 0 },
      { atMs: 1000, tenantIndex: 0 },
      { atMs: 1000, tenantIndex: 1 },
      { atMs: 1000, tenantIndex: 1 },
      { atMs: 2000, tenantIndex: 0 },
    ]);
  });

  it('share one workload arrival process, leaving the tenant to be drawn', () => {
    const arrivals = createWorkloadArrivals(
      { arrival: { kind: 'constant', ratePerSec: 2, maxArrivals: 2 } },
      streams('x'),
    );
    expect([arrivals?.next(), arrivals?.next(), arrivals?.next()]).toEqual([
      { atMs: 0, tenantIndex: undefined },
      { atMs: 500, tenantIndex: undefined },
      undefined,
    ]);
    expect(createWorkloadArrivals({}, streams('x'))).toBeUndefined();
  });
});
