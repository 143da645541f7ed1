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

test('every policy scorecard metric the dashboard queries is on /metrics of a proxy with --policy', async () => {
  const dash = readFileSync(new URL('../../reports/grafana/admission-gate.json', import.meta.url), 'utf8');
  const names = new Set([...dash.matchAll(/\b(sluice_policy_[a-z_]+)/g)].map((m) => m[1]!));
  expect(names.size).toBeGreaterThan(15);
  const policy = `version: 1
capacity_seats: 4
classes:
  chat:
    priority: 10
    guaranteed_seats: 4
    queue: { max_count: 2, max_age_ms: 1000, max_cost_seats: 4 }
    deadline: { default_ms: 2000 }
envelope: { default_class: chat }
`;
  const p = await startProxy({ policy: { text: policy, fileName: 'p.yaml' } });
  try {
    const exported = new Set(
      p
        .metricsText()
        .split('\n')
        .map((l) => /^([a-z_:]+)/.exec(l)?.[1] ?? ''),
    );
    for (const n of names) expect(exported.has(n), n).toBe(true);
  } finally {
    await p.close();
  }
});
