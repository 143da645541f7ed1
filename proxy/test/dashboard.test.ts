/**
 * The Grafana "AI admission gate" row only plots series the proxy exports.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { addRule, freePort, rule, startProxy, TestBackend } from './helpers.js';

test('every metric the dashboard queries is on /metrics', async () => {
  const dash = readFileSync(new URL('../../reports/grafana/admission-gate.json', import.meta.url), 'utf8');
  const names = new Set([...dash.matchAll(/\b(loxilb_[a-z_]+)/g)].map((m) => m[1]!));
  expect(names.size).toBeGreaterThan(10);
  const b = await new TestBackend().start();
  const p = await startProxy();
  try {
    await addRule(
      p,
      rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 4, fc_adaptive: 'on' }, [b]),
    );
    const text = p.metricsText();
    const exported = new Set(text.split('\n').map((l) => /^([a-z_:]+)/.exec(l)?.[1] ?? ''));
    for (const n of names) expect(exported.has(n), n).toBe(true);
  } finally {
    await p.close();
    await b.stop();
  }
});
