/**
 * Telemetry and health on the real clock: scraped vllm:num_requests_waiting
 * and streamed TTFT move the adaptive ceiling; a stopped scrape freezes it;
 * the health probe's circuit breaker takes an endpoint out and brings it
 * back into its warm-up.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoxiProxy } from '../proxy.js';
import {
  addRule,
  admin,
  freePort,
  infer,
  metricSum,
  rule,
  startProxy,
  TestBackend,
  until,
} from './helpers.js';

let p: LoxiProxy;
let b1: TestBackend;
let b2: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
  b2 = await new TestBackend('b2').start();
  p = await startProxy({
    monitor: { scrapeIntervalMs: 100, healthIntervalMs: 100, breakerFailures: 2, breakerOpenMs: 100 },
  });
});

afterAll(async () => {
  await p.close();
  await b1.stop();
  await b2.stop();
});

async function eff(port: number): Promise<Record<string, unknown>> {
  const g = await admin(p.adminPort, 'GET', '/netlox/v1/config/loadbalancer/all');
  const all = (g.json as { lbAttr: { serviceArguments: Record<string, unknown> }[] }).lbAttr;
  return all.find((x) => x.serviceArguments.port === port)!.serviceArguments.fc_effective as Record<
    string,
    unknown
  >;
}

describe('adaptive ceiling from scraped engine metrics', () => {
  test('waiting requests tighten, clear evidence widens, a stopped scrape freezes', async () => {
    b1.waiting = 5;
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 8, fc_adaptive: 'on', fc_telemetry_stale_ms: 400 },
        [b1],
      ),
    );
    expect(await until(async () => (await eff(port)).adapt_state === 'tightened', 4000)).toBe(true);
    const t = await eff(port);
    expect(t.adapt_reason).toBe('queued');
    expect(t.effective_max_outstanding as number).toBeLessThan(8);
    expect(t.effective_max_outstanding as number).toBeGreaterThanOrEqual(2);
    const text = p.metricsText();
    expect(
      metricSum(
        text,
        'loxilb_ai_worker_scrape_total',
        (l) => l.includes(`:${port}"`) && l.includes('result="ok"'),
      ),
    ).toBeGreaterThan(0);
    // Scrapes fail: the tightened ceiling holds (frozen).
    b1.metricsOk = false;
    expect(await until(async () => (await eff(port)).adapt_state === 'frozen', 4000)).toBe(true);
    // Fresh, clear evidence widens it again.
    b1.metricsOk = true;
    b1.waiting = 0;
    expect(await until(async () => (await eff(port)).adapt_reason === 'clear', 4000)).toBe(true);
  }, 15_000);

  test('streamed time to first token above fc_ttft_target_ms tightens (reason ttft)', async () => {
    b2.waiting = 0;
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 8, fc_adaptive: 'on', fc_ttft_target_ms: 5 },
        [b2],
      ),
    );
    const r = await infer(port, { stream: true, hold: 60 });
    expect(r.status).toBe(200);
    expect(await until(async () => (await eff(port)).adapt_reason === 'ttft', 4000)).toBe(true);
  }, 10_000);
});

describe('health probes and the circuit breaker', () => {
  test('an endpoint failing its probe is taken out, and its return starts the warm-up', async () => {
    const port = await addRule(
      p,
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 8, fc_ep_max_inflight: 8, fc_warmup_ms: 10_000 },
        [b2],
      ),
    );
    b2.healthy = false;
    try {
      expect(await until(async () => (await infer(port, { hold: 1 })).status === 503, 3000)).toBe(true);
      const r = await infer(port, { hold: 1 });
      expect(JSON.parse(r.body).error).toBe('admission_no_capacity');
      expect(metricSum(p.metricsText(), 'loxilb_ai_endpoint_healthy', (l) => l.includes(`:${port}"`))).toBe(
        0,
      );
    } finally {
      b2.healthy = true;
    }
    expect(await until(async () => (await infer(port, { hold: 1 })).status === 200, 3000)).toBe(true);
    expect((await eff(port)).warming_endpoints).toBe(1);
  });
});
