/** HEAD /metrics on the admin port: scrapers and uptime probes send it before GET. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { admin, startProxy } from './helpers.js';

let p: Awaited<ReturnType<typeof startProxy>>;
beforeAll(async () => {
  p = await startProxy({});
});
afterAll(async () => {
  await p.close();
});

test('HEAD /metrics answers 200 with no body, as GET answers 200 with the metrics', async () => {
  const r = await admin(p.adminPort, 'HEAD', '/metrics');
  expect(r.status).toBe(200);
  expect(r.body).toBe('');
  const get = await admin(p.adminPort, 'GET', '/metrics');
  expect(get.status).toBe(200);
  expect(get.body.length).toBeGreaterThan(0);
});

test('other methods on /metrics still answer 405 naming GET and HEAD', async () => {
  const r = await admin(p.adminPort, 'POST', '/metrics', {});
  expect(r.status).toBe(405);
});
