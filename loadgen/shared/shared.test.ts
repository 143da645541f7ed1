/**
 * The shared load-generation modules: the schedule (`sim/clients/schedule.ts`, equal to the
 * simulator's draws), scaling, k6 stages, payloads, the SSE parser, goodput and the k6 summary.
 */
import { describe, expect, it } from 'vitest';
import { RequestFactory } from '../../sim/clients/request-factory.js';
import { collectSchedule, createSchedule, type LoadSetup } from '../../sim/clients/schedule.js';
import { createWorkloadArrivals } from '../../sim/clients/tenants.js';
import { rngStream } from '../../sim/kernel/rng.js';
import { toClientConfig } from '../../sim/scenario/client-config.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { type AttemptObservation, classifyAttempt, parseRefusal, parseRetryAfter } from './goodput.js';
import { summaryFromK6 } from './k6-summary.js';
import { buildRequest, promptText } from './payload.js';
import { buildK6Plan, k6Options, METRIC } from './plan.js';
import { scaleSetup } from './scale.js';
import { CompletionStream, SseParser } from './sse.js';
import { stagesFromCounts, stagesIntegral, windowCounts } from './stages.js';

describe('schedule', () => {
  it('offers the requests the simulator draws, in time order', async () => {
    const scenario = await loadScenario('scenarios/noisy-tenant.yaml');
    const setup = toClientConfig(scenario) as LoadSetup;
    const endMs = 20_000;
    const mine = collectSchedule(createSchedule(setup, { seed: 3, endMs }));
    // The simulator's way: the same arrivals and factory on seedrandom streams.
    const streams = (name: string) => {
      const r = rngStream(3, name);
      return () => r.next();
    };
    const factory = new RequestFactory(setup.workload, streams);
    const arrivals = createWorkloadArrivals(setup.workload, streams)!;
    const theirs = [];
    for (let a = arrivals.next(); a !== undefined && a.atMs < endMs; a = arrivals.next())
      theirs.push(factory.create(a.atMs, a.tenantIndex));
    expect(mine.length).toBeGreaterThan(800);
    expect(mine).toEqual(theirs);
    expect(mine.every((d, i) => i === 0 || d.sentAtMs >= mine[i - 1]!.sentAtMs)).toBe(true);
  });

  it('scales times and keeps rates', async () => {
    const setup = toClientConfig(await loadScenario('scenarios/ramp-past-saturation.yaml')) as LoadSetup;
    const full = collectSchedule(createSchedule(setup, { seed: 1, endMs: 200_000 })).length;
    const tenth = collectSchedule(createSchedule(scaleSetup(setup, 0.1), { seed: 1, endMs: 20_000 })).length;
    expect(tenth / full).toBeGreaterThan(0.085);
    expect(tenth / full).toBeLessThan(0.115);
  });
});

describe('k6 stages and plan', () => {
  it('offers exactly the scheduled count, with integer targets', () => {
    const counts = [3, 3, 3, 7, 12, 0, 5, 5];
    const s = stagesFromCounts(counts, 1000);
    expect(stagesIntegral(s)).toBeCloseTo(38, 9);
    expect(s.total).toBe(38);
    expect(s.stages.every((x) => Number.isInteger(x.target))).toBe(true);
    expect(s.stages[0]).toEqual({ target: 3, duration: '2500ms' });
    expect(windowCounts([0, 999, 1000, 2500, 9999], 3000, 1000)).toEqual([2, 1, 1]);
  });

  it('plans a scenario: stages match the requests, options carry the thresholds', async () => {
    const scenario = await loadScenario('scenarios/noisy-tenant.yaml');
    const setup = scaleSetup(toClientConfig(scenario) as LoadSetup, 0.1);
    const plan = buildK6Plan(setup, {
      scenario: 'noisy-tenant',
      seed: 1,
      durationScale: 0.1,
      endMs: 12_000,
      warmupMs: 1000,
      dialect: 'loxilb',
      ceilings: { max_outstanding: 128, queue_depth: 128, queue_wait_ms: 5000 },
    });
    expect(stagesIntegral(plan.arrival)).toBeCloseTo(plan.requests.length, 6);
    expect(plan.apiKeys['batch-bot']).toBe('sk-noisy-0001');
    expect(plan.tenants).toContain('team-h');
    const o = k6Options(plan, { GOODPUT_MIN: '0.9' });
    expect(o.scenarios.cliff.executor).toBe('ramping-arrival-rate');
    expect(o.thresholds[METRIC.goodput]).toEqual(['rate>=0.9']);
    expect(o.thresholds.dropped_iterations).toEqual([`count<=${plan.thresholds.droppedMax}`]);
    expect(o.thresholds[`${METRIC.goodput}{tenant:team-a}`]).toBeDefined();
  });
});

describe('payload', () => {
  it('builds a chat completion of the shape and key', () => {
    const spec = buildRequest(
      { tenant: 't', promptTokens: 100, outputTokens: 17, stream: true, inference: true, id: 5 },
      { t: 'sk-1' },
    );
    expect(spec.method).toBe('POST');
    expect(spec.path).toBe('/v1/chat/completions');
    expect(spec.headers.authorization).toBe('Bearer sk-1');
    const body = JSON.parse(spec.body!);
    expect(body).toMatchObject({
      max_tokens: 17,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    });
    expect(Math.ceil(body.messages[0].content.length / 4)).toBe(100);
    expect(promptText(1)).toBe('cat');
    const models = buildRequest(
      { tenant: undefined, promptTokens: 0, outputTokens: 0, stream: false, inference: false },
      {},
    );
    expect(models).toMatchObject({ method: 'GET', path: '/v1/models', body: null });
    expect(models.headers.authorization).toBeUndefined();
  });
});

describe('sse', () => {
  const body =
    ': comment\r\n' +
    'data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\n' +
    'event: x\ndata: {"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}\n\n' +
    'data: {"choices":[],"usage":{"completion_tokens":2}}\r\rdata: [DONE]\n\n';

  it('parses events whatever the chunking', () => {
    const whole = new SseParser().feed(body);
    expect(whole.map((e) => e.data)).toHaveLength(4);
    for (let cut = 0; cut < body.length; cut++) {
      const p = new SseParser();
      const evs = [...p.feed(body.slice(0, cut)), ...p.feed(body.slice(cut))];
      expect(evs).toEqual(whole);
    }
  });

  it('accounts tokens, gaps, usage and [DONE]', () => {
    const s = new CompletionStream();
    const cuts = [0, body.indexOf('event:'), body.indexOf('data: {"choices":[],'), body.length];
    for (let i = 1; i < cuts.length; i++) s.feed(body.slice(cuts[i - 1], cuts[i]), 100 + 10 * i);
    expect(s.facts.firstTokenAtMs).toBe(110);
    expect(s.facts.gapsMs).toEqual([10]);
    expect(s.facts.done).toBe(true);
    expect(s.facts.finishReason).toBe('length');
    expect(s.generatedTokens).toBe(2);
  });
});

describe('goodput', () => {
  const base: AttemptObservation = {
    inference: true,
    status: 200,
    error: '',
    clientLeft: false,
    finished: true,
    generatedTokens: 10,
    expectedTokens: 10,
    finishReason: '',
    ttftFromFirstSendMs: 100,
    endAtMs: 900,
    deadlineAtMs: 1000,
    ttftSloMs: 200,
  };
  it.each([
    [{}, 'completed', true],
    [{ ttftFromFirstSendMs: 250 }, 'completed', false],
    [{ endAtMs: 1001 }, 'completed', false],
    [{ generatedTokens: 9 }, 'failed', false],
    [{ generatedTokens: 9, finishReason: 'length' }, 'completed', true],
    [{ finished: false }, 'failed', false],
    [{ clientLeft: true }, 'cancelled', false],
    [{ status: 429, error: 'admission_capacity' }, 'shed', false],
    [{ status: 503, error: 'admission_no_capacity' }, 'shed', false],
    [{ status: 503, error: 'admission_drained' }, 'drained', false],
    [{ status: 504, error: 'admission_queue_timeout' }, 'timed_out', false],
    [{ status: 503, error: 'admission_queue_timeout' }, 'timed_out', false],
    [{ status: 502 }, 'failed', false],
    [{ status: 0 }, 'failed', false],
    // The policy layer's answers, as the simulator records them: a reject is shed at any status,
    // a wait that ran out is timed_out, a queue closed under a waiter is drained.
    [{ status: 429, error: 'policy_tenant_quota' }, 'shed', false],
    [{ status: 503, error: 'policy_class_capacity' }, 'shed', false],
    [{ status: 503, error: 'policy_dependency_open' }, 'shed', false],
    [{ status: 504, error: 'policy_deadline_impossible' }, 'shed', false],
    [{ status: 409, error: 'policy_duplicate_intent' }, 'shed', false],
    [{ status: 504, error: 'policy_queue_max_age' }, 'timed_out', false],
    [{ status: 504, error: 'policy_queue_deadline' }, 'timed_out', false],
    [{ status: 504, error: 'defer_expired' }, 'timed_out', false],
    [{ status: 503, error: 'policy_queue_closed' }, 'drained', false],
    [{ status: 503, error: 'policy_something_new' }, 'failed', false],
  ] as [Partial<AttemptObservation>, string, boolean][])('%j is %s (good %s)', (o, outcome, good) => {
    expect(classifyAttempt({ ...base, ...o })).toEqual({ outcome, good });
  });

  it('reads refusals of both dialects', () => {
    expect(
      parseRefusal(
        '{"error":"admission_queue_timeout","retry_after":3,"jitter_hint_ms":1500,"queued_ms":5000}',
        {
          'retry-after': '3',
        },
      ),
    ).toEqual({ error: 'admission_queue_timeout', retryAfterSec: 3, jitterHintMs: 1500, queuedMs: 5000 });
    expect(parseRefusal('{"error":{"code":"admission_queue_full"}}', { 'retry-after': '2' }).error).toBe(
      'admission_queue_full',
    );
    expect(parseRefusal('<html>', { 'x-smg-error-code': 'admission_queue_full' }).error).toBe(
      'admission_queue_full',
    );
    expect(
      parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')),
    ).toBe(10);
  });
});

describe('k6 summary', () => {
  it('maps end-of-test data to the run summary', () => {
    const plan = {
      ...buildK6Plan(
        {
          workload: { arrival: { kind: 'constant', ratePerSec: 1, durationMs: 1000 } },
          retry: { kind: 'none' },
          apiKeys: {},
          shifts: [],
        },
        {
          scenario: 's',
          seed: 1,
          durationScale: 1,
          endMs: 11_000,
          warmupMs: 1000,
          dialect: 'loxilb',
          ceilings: { max_outstanding: 1, queue_depth: 2, queue_wait_ms: 3 },
        },
      ),
    };
    const m = (values: Record<string, number>) => ({ values });
    const s = summaryFromK6(
      {
        metrics: {
          [METRIC.offered]: m({ count: 10 }),
          [METRIC.attempts]: m({ count: 12 }),
          [METRIC.completed]: m({ count: 8 }),
          [METRIC.goodput]: m({ rate: 0.6, passes: 6, fails: 4 }),
          [`${METRIC.goodput}{tenant:keyless}`]: m({ rate: 0.6, passes: 6, fails: 4 }),
          [`${METRIC.outcomes}{outcome:completed}`]: m({ count: 8 }),
          [`${METRIC.outcomes}{outcome:shed}`]: m({ count: 4 }),
          [`${METRIC.refusals}{refusal:429 admission_capacity}`]: m({ count: 4 }),
          [METRIC.ttft]: m({ avg: 5, med: 4, 'p(95)': 9, 'p(99)': 10, max: 11, count: 8 }),
          dropped_iterations: m({ count: 2 }),
        },
      },
      plan,
    );
    expect(s).toMatchObject({
      offered: 10,
      attempts: 12,
      good: 6,
      goodput_rps: 0.6,
      goodput_share: 0.6,
      shed_rate: 0.333,
      sheds: { '429 admission_capacity': 4 },
      conservation_ok: true,
      anomalies: { dropped_iterations: 2 },
      ttft_ms: { count: 8, p50: 4, p95: 9, p99: 10, max: 11, mean: 5 },
    });
    expect(s.decisions.capacity_shed).toBe(4);
    expect(s.tenants).toEqual([
      { tenant: 'keyless', offered: 10, completed: 0, good: 6, goodput_rps: 0.6, good_share: 0.6 },
    ]);
  });
});
