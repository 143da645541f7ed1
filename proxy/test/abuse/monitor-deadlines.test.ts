/**
 * An endpoint whose /metrics and /health trickle bytes and never end: each
 * scrape and probe has a deadline, a late one counts as failed, and the next
 * runs on schedule (so failures keep being counted and the breaker opens).
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { LoxiProxy } from '../../proxy.js';
import { addRule, freePort, metricSum, rule, startProxy, until } from '../helpers.js';

let p: LoxiProxy;
let trickle: http.Server;
let tport = 0;

beforeAll(async () => {
  trickle = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    const t = setInterval(() => res.write('# still here\n'), 50);
    res.on('close', () => clearInterval(t));
  });
  await new Promise<void>((r) => trickle.listen(0, '127.0.0.1', r));
  tport = (trickle.address() as net.AddressInfo).port;
  p = await startProxy({
    monitor: {
      scrapeIntervalMs: 150,
      healthIntervalMs: 150,
      probeTimeoutMs: 300,
      breakerFailures: 3,
      breakerOpenMs: 60_000,
    },
  });
});

afterAll(async () => {
  await p.close();
  trickle.closeAllConnections();
  await new Promise<void>((r) => trickle.close(() => r()));
});

test('a /metrics and /health that trickle and never end: each late scrape and probe fails, and the next runs', async () => {
  const port = await addRule(
    p,
    rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 8, fc_adaptive: 'on' }, [
      { port: tport },
    ]),
  );
  const mine = (l: string): boolean => l.includes(`127.0.0.1:${port}"`);
  const scrapeErrors = () =>
    metricSum(
      p.metricsText(),
      'loxilb_ai_worker_scrape_total',
      (l) => mine(l) && l.includes('result="error"'),
    ) ?? 0;
  // Several failed scrapes, one after another: the busy flag is cleared by each deadline.
  expect(await until(() => scrapeErrors() >= 3, 8_000)).toBe(true);
  // Three late probes in a row open the breaker.
  expect(await until(() => metricSum(p.metricsText(), 'loxilb_ai_endpoint_healthy', mine) === 0, 8_000)).toBe(
    true,
  );
});
