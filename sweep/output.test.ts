import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveRule } from './output.js';
import { planSweep } from './plan.js';
import { runSweep } from './sweep.js';
import { tinyLoxilb } from './test/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('size --out', () => {
  it('writes recommended-rule.json, the rule the sizing guide POSTs with curl -d @recommended-rule.json', async () => {
    const scenario = tinyLoxilb();
    const plan = planSweep(scenario, { vary: ['fc_max_outstanding=4,8'], slo: ['shed_rate<=0.9'], seeds: 1 });
    const result = await runSweep(scenario, plan, { workers: 0 });
    expect(result.recommendation.feasible).toBe(true);
    const path = saveRule(dir, result);
    expect(path).toBe(join(dir, 'recommended-rule.json'));
    const rule = JSON.parse(readFileSync(join(dir, 'recommended-rule.json'), 'utf8')) as {
      serviceArguments: Record<string, unknown>;
    };
    expect(rule).toEqual(result.recommendation.rule);
    expect(rule.serviceArguments.fc_max_outstanding).toBe(result.recommendation.params?.fc_max_outstanding);

    // A later sweep that recommends nothing leaves no stale rule behind.
    const none = {
      ...result,
      recommendation: { ...result.recommendation, feasible: false, rule: undefined },
    };
    expect(saveRule(dir, none)).toBeUndefined();
    expect(existsSync(join(dir, 'recommended-rule.json'))).toBe(false);
  });
});
