/**
 * The decision log on a disk that stalls: a writable that never drains.
 * Records past the buffer bound are dropped and counted (not buffered
 * without limit), the count is on /metrics in Prometheus text, and closing
 * does not wait for good.
 */
import { Writable } from 'node:stream';
import { expect, test } from 'vitest';
import { type DecisionRecord, JsonlDecisionLog } from '../../decision-log.js';
import { addRule, admin, freePort, infer, metricSum, rule, startProxy, TestBackend } from '../helpers.js';

/** A writable that accepts `hwm` bytes into its buffer and never completes a write. */
function stalledDisk(hwm: number): Writable {
  return new Writable({ highWaterMark: hwm, write: () => {} });
}

const rec: DecisionRecord = {
  time: '2026-01-01T00:00:00.000Z',
  service: 's',
  tenant: null,
  decision: 'admit',
  reason: 'admitted',
  outcome: 'completed',
  status: 200,
  error: null,
  method: 'POST',
  path: '/v1/chat/completions',
  protocol: 'http1',
  endpoint: null,
  queued_ms: null,
  ttft_ms: null,
  duration_ms: 1,
  prompt_tokens: null,
  output_tokens: null,
};

test('a disk that never drains: records past the buffer bound are dropped and counted, memory stays bounded', async () => {
  const disk = stalledDisk(4096);
  const log = new JsonlDecisionLog(disk, { closeTimeoutMs: 100 });
  const line = JSON.stringify(rec).length + 1;
  for (let i = 0; i < 1000; i++) log.write(rec);
  // What was buffered is the bound plus at most the record that crossed it.
  expect(disk.writableLength).toBeLessThanOrEqual(4096 + line);
  expect(log.dropped).toBe(1000 - Math.ceil(4096 / line));
  await log.close();
});

test('a disk that drains again takes records again', async () => {
  let pending: (() => void) | null = null;
  const disk = new Writable({
    highWaterMark: 1024,
    write: (_c, _e, cb) => {
      pending = cb;
    },
  });
  const log = new JsonlDecisionLog(disk, { closeTimeoutMs: 100 });
  for (let i = 0; i < 100; i++) log.write(rec);
  const dropped = log.dropped;
  expect(dropped).toBeGreaterThan(0);
  // The disk catches up: every buffered write completes, 'drain' is emitted.
  while (pending !== null) {
    const cb: () => void = pending;
    pending = null;
    cb();
    await new Promise((r) => setImmediate(r));
  }
  log.write(rec);
  expect(log.dropped).toBe(dropped);
  await log.close();
});

test('decision_log_dropped_total is on the proxy /metrics, in Prometheus text', async () => {
  const b = await new TestBackend('b').start();
  const log = new JsonlDecisionLog(stalledDisk(64), { closeTimeoutMs: 100 });
  const p = await startProxy({ decisionLog: log });
  try {
    const port = await addRule(p, rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b]));
    for (let i = 0; i < 3; i++) expect((await infer(port, { hold: 1 })).status).toBe(200);
    const text = (await admin(p.adminPort, 'GET', '/metrics')).body;
    expect(text).toContain('# TYPE decision_log_dropped_total counter');
    expect(text).toMatch(/^# HELP decision_log_dropped_total /m);
    expect(metricSum(text, 'decision_log_dropped_total')).toBe(log.dropped);
    expect(log.dropped).toBeGreaterThanOrEqual(2);
  } finally {
    await p.close();
    await b.stop();
  }
});
