/**
 * The cliff test for real engines behind the gate, in k6: offered load follows a scenario's
 * schedule on a `ramping-arrival-rate` executor (stages from `sluice k6-plan`), iteration i sends
 * the plan's request i with its tenant's API key, retries follow the scenario's policy (Retry-After
 * plus the body's jitter hint, within the deadline), and every logical request adds one sample to
 * the `sluice_goodput` Rate (shed and failed ones included). Thresholds: goodput at least
 * GOODPUT_MIN, dropped_iterations at most DROPPED_MAX (a dropped iteration is offered load k6
 * silently did not send). `handleSummary` writes the simulator's summary shape.
 *
 * Under stock k6 the body arrives whole: TTFT here is time to the response headers (an upper
 * bound for a non-streamed answer, a lower bound for a streamed one when the server flushes its
 * headers before the first token), and there is no inter-token latency; see loadgen/README.md.
 *
 *   sluice k6-plan --scenario scenarios/ramp-past-saturation.yaml --out plan.json
 *   k6 run -e TARGET=http://gate:8080 -e SLUICE_PLAN=$PWD/plan.json dist/k6/cliff.js
 */
import { sleep } from 'k6';
import { SharedArray } from 'k6/data';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { createRetryPolicy } from '../../sim/clients/retry.js';
import { admissionGauges, classifyAttempt, parseRefusal } from '../shared/goodput.js';
import { type K6SummaryData, summaryFromK6 } from '../shared/k6-summary.js';
import { buildRequest } from '../shared/payload.js';
import { type K6Plan, k6Options, METRIC, type PlanRequest } from '../shared/plan.js';
import { completionFacts } from '../shared/sse.js';

const PLAN_FILE = __ENV.SLUICE_PLAN || 'plan.json';
const TARGET = (__ENV.TARGET || 'http://127.0.0.1:8080').replace(/\/$/, '');
/** k6's default request timeout, used when a request has no deadline. */
const NO_DEADLINE_TIMEOUT_MS = 60_000;

const meta: K6Plan = new SharedArray('sluice-plan', () => {
  const plan = JSON.parse(open(PLAN_FILE)) as K6Plan;
  return [{ ...plan, requests: [] }];
})[0] as K6Plan;
const requests: PlanRequest[] = new SharedArray(
  'sluice-plan-requests',
  () => (JSON.parse(open(PLAN_FILE)) as K6Plan).requests,
);

export const options: Options = k6Options(meta, __ENV);

const goodput = new Rate(METRIC.goodput);
const offered = new Counter(METRIC.offered);
const attempts = new Counter(METRIC.attempts);
const completed = new Counter(METRIC.completed);
const outcomes = new Counter(METRIC.outcomes);
const refusals = new Counter(METRIC.refusals);
const ttft = new Trend(METRIC.ttft, true);
const e2e = new Trend(METRIC.e2e, true);
const queueWait = new Trend(METRIC.queueWait, true);
const gateInflight = new Gauge(METRIC.inflight);
const gateQueued = new Gauge(METRIC.queued);
const retryPolicy = createRetryPolicy(meta.retry);

function lowerHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(h)) out[k.toLowerCase()] = h[k] as string;
  return out;
}

/** One logical request: the plan's request for this iteration, with its retries. */
export function cliff(): void {
  const i = exec.scenario.iterationInTest;
  const r = requests[i % Math.max(1, requests.length)];
  if (r === undefined) return;
  const testStart = exec.scenario.startTime;
  const testEnd = testStart + meta.duration_s * 1000;
  const warmupEnd = testStart + meta.warmup_s * 1000;
  const firstAt = Date.now();
  const tenant = r.tenant ?? 'keyless';
  const tags = { tenant };
  const deadlineAt = r.deadlineMs === null ? undefined : firstAt + r.deadlineMs;
  if (firstAt >= warmupEnd && r.inference) offered.add(1, tags);
  let good = false;
  for (let attempt = 1; ; attempt++) {
    const sentAt = Date.now();
    const measured = sentAt >= warmupEnd;
    const remaining = deadlineAt === undefined ? NO_DEADLINE_TIMEOUT_MS : deadlineAt - sentAt;
    if (remaining <= 0) break;
    const spec = buildRequest(
      { ...r, tenant: r.tenant ?? undefined, id: `${i}.${attempt}` },
      meta.apiKeys,
      meta.model === null ? {} : { model: meta.model },
    );
    const res = http.request(spec.method, TARGET + spec.path, spec.body, {
      headers: spec.headers,
      timeout: remaining,
      tags: { tenant, protocol: r.protocol },
      responseType: 'text',
    });
    const endAt = Date.now();
    const headersAt = endAt - res.timings.receiving;
    const timedOut = res.error_code === 1050;
    const body = typeof res.body === 'string' ? res.body : '';
    const ok = res.status >= 200 && res.status < 300;
    const headers = lowerHeaders(res.headers);
    const facts = ok && r.inference ? completionFacts(body, r.stream, headersAt) : undefined;
    const refusal = res.status >= 400 ? parseRefusal(body, headers, endAt) : undefined;
    const verdict = classifyAttempt({
      inference: r.inference,
      status: timedOut ? 0 : res.status,
      error: refusal?.error ?? '',
      clientLeft: timedOut && deadlineAt !== undefined,
      finished: facts === undefined ? true : facts.done,
      generatedTokens: facts?.generated ?? 0,
      expectedTokens: r.outputTokens,
      finishReason: facts?.finishReason ?? '',
      ttftFromFirstSendMs: ok ? headersAt - firstAt : undefined,
      endAtMs: endAt,
      deadlineAtMs: deadlineAt,
      ttftSloMs: r.ttftSloMs ?? undefined,
    });
    good = verdict.good;
    if (measured && r.inference) {
      attempts.add(1, tags);
      outcomes.add(1, { ...tags, outcome: verdict.outcome });
      if (refusal !== undefined && refusal.error !== '')
        refusals.add(1, { ...tags, refusal: `${res.status} ${refusal.error}` });
      if (refusal?.queuedMs !== undefined) queueWait.add(refusal.queuedMs, tags);
      if (verdict.outcome === 'completed') {
        completed.add(1, tags);
        ttft.add(headersAt - sentAt, tags);
        e2e.add(endAt - sentAt, tags);
      }
      const g = admissionGauges(headers);
      if (g.inflight !== undefined) gateInflight.add(g.inflight);
      if (g.queued !== undefined) gateQueued.add(g.queued);
    }
    if (verdict.outcome === 'completed' || verdict.outcome === 'cancelled') break;
    const delay = retryPolicy(
      {
        attempt,
        status: timedOut ? 0 : res.status,
        ...(refusal?.retryAfterSec === undefined ? {} : { retryAfterSec: refusal.retryAfterSec }),
        ...(refusal?.jitterHintMs === undefined ? {} : { jitterHintMs: refusal.jitterHintMs }),
      },
      Math.random,
    );
    if (delay === undefined) break;
    const nextAt = Date.now() + delay;
    if (nextAt >= testEnd || (deadlineAt !== undefined && nextAt >= deadlineAt)) break;
    sleep(delay / 1000);
  }
  if (firstAt >= warmupEnd && r.inference) goodput.add(good, tags);
}

/** Writes the summary in the simulator's shape (SUMMARY_OUT, default summary.json) and a short text. */
export function handleSummary(data: K6SummaryData): Record<string, string> {
  const s = summaryFromK6(data, meta);
  const out = __ENV.SUMMARY_OUT || 'summary.json';
  const text =
    `sluice cliff: ${s.scenario}: offered ${s.offered}, good ${s.good} (${(s.goodput_share * 100).toFixed(1)} %), ` +
    `goodput ${s.goodput_rps} req/s, shed rate ${(s.shed_rate * 100).toFixed(1)} %, ` +
    `TTFT(headers) p95 ${s.ttft_ms.p95} ms, dropped iterations ${s.anomalies.dropped_iterations ?? 0}\n`;
  return { [out]: `${JSON.stringify(s, null, 2)}\n`, stdout: text };
}
