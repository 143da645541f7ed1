import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { PolicyCore } from './decide.js';
import { PolicyGate } from './host.js';
import { parsePolicy } from './parse.js';
import { env } from './test/policy.js';

/** One class of 100 seats, 1000 output tokens per seat, no clamping in the way (1..50 seats). */
const text = (feedback: string) => `version: 1
capacity_seats: 100
estimator:
  output_tokens_per_seat: 1000
  min_seats: 1
  max_seats: 50${feedback}
classes:
  c:
    priority: 10
    guaranteed_seats: 100
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 5000 }
envelope: { default_class: c }
`;

const ON = '\n  feedback: { enabled: true, alpha: 0.5, min_factor: 0.5, max_factor: 3, min_samples: 4 }';

function core(feedback: string) {
  const clock = new ManualClock(0);
  return { core: new PolicyCore(parsePolicy(text(feedback), 'p.yaml'), clock), clock };
}

/** Admits a request estimated at 4 seats and releases it having used `outTokens` (≈ seats × 1000). */
function reconcile(c: PolicyCore, now: number, outTokens: number): number {
  const d = c.decide({ ...env('c', 't', now), cost: { promptTokens: 0, maxOutputTokens: 4000 } });
  if (d.kind !== 'admit') throw new Error(d.kind);
  c.release(d.grant, 'completed', { promptTokens: 0, outputTokens: outTokens });
  return d.grant.seats;
}

describe('estimator feedback', () => {
  it('is off by default: a biased estimator is reported, never corrected', () => {
    const { core: c, clock } = core('');
    for (let i = 0; i < 50; i++) expect(reconcile(c, clock.now(), 8000)).toBe(4);
    expect(c.estimatorCorrection('c')).toEqual({ factor: 1, running: 1, samples: 0 });
    expect(c.score.snapshot().c!.estimator).toMatchObject({ reconciled: 50, underestimated: 50 });
  });

  it('corrects an underestimating class multiplicatively once min_samples are seen, bounded by max_factor', () => {
    const { core: c, clock } = core(ON);
    // Actual 8 seats for an estimate of 4: running 1 → 1.5 → … ; applied from the 4th sample.
    const seats: number[] = [];
    for (let i = 0; i < 4; i++) seats.push(reconcile(c, clock.now(), 8000));
    expect(seats).toEqual([4, 4, 4, 4]);
    const k = c.estimatorCorrection('c');
    expect(k.samples).toBe(4);
    expect(k.factor).toBeGreaterThan(1);
    expect(k.factor).toBe(k.running);
    expect(c.seatsFor('c', { promptTokens: 0, maxOutputTokens: 4000 })).toBe(Math.ceil(4 * k.factor));
    // Converges on actual/estimated = 1: the estimate approaches the 8 seats actually used.
    for (let i = 0; i < 40; i++) reconcile(c, clock.now(), 8000);
    expect(c.seatsFor('c', { promptTokens: 0, maxOutputTokens: 4000 })).toBe(8);
    // Never past max_factor however biased.
    for (let i = 0; i < 40; i++) reconcile(c, clock.now(), 50_000);
    expect(c.estimatorCorrection('c').factor).toBe(3);
  });

  it('never goes below min_factor for an overestimating class', () => {
    const { core: c, clock } = core(ON);
    for (let i = 0; i < 40; i++) reconcile(c, clock.now(), 0);
    expect(c.estimatorCorrection('c').factor).toBe(0.5);
    expect(c.seatsFor('c', { promptTokens: 0, maxOutputTokens: 4000 })).toBe(2);
  });

  it('a policy swap keeps each class its correction', () => {
    const clock = new ManualClock(0);
    const policy = parsePolicy(text(ON), 'p.yaml');
    const gate = new PolicyGate<number>({
      policy,
      clock,
      events: { onDispatch: () => {}, onExpire: () => {}, onDrain: () => undefined },
    });
    for (let i = 0; i < 10; i++) reconcile(gate.core, clock.now(), 8000);
    const before = gate.core.estimatorCorrection('c');
    gate.swap(parsePolicy(text(ON), 'p.yaml'));
    expect(gate.core.estimatorCorrection('c')).toEqual(before);
    expect(gate.snapshot().classes.c!.estimator.correction_factor).toBeCloseTo(before.factor, 5);
  });

  it('refuses bad feedback settings, naming field, value and bound', () => {
    const bad = (fb: string) => () => parsePolicy(text(`\n  feedback: ${fb}`), 'p.yaml');
    expect(bad('{ enabled: true, alpha: 0 }')).toThrow(/estimator\.feedback\.alpha: 0 is .*0/);
    expect(bad('{ enabled: true, min_factor: 1.5 }')).toThrow(
      /estimator\.feedback\.min_factor: 1\.5 is above the maximum 1/,
    );
    expect(bad('{ enabled: true, max_factor: 0.5 }')).toThrow(
      /estimator\.feedback\.max_factor: 0\.5 is below the minimum 1/,
    );
    expect(bad('{ enabled: yes }')).toThrow(/estimator\.feedback\.enabled/);
    expect(bad('{ enabled: true, alfa: 0.1 }')).toThrow(
      /estimator\.feedback\.alfa: unknown key; expected one of enabled, alpha/,
    );
  });
});
