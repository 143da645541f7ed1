/**
 * `sluice size --vary policy.PATH=...` sizes a scenario's policy: each point runs with the field
 * set in a copy of the policy (the same run as editing the file), bad fields and bad points are
 * input errors naming them, rule fields that change nothing under a policy are refused, and the
 * recommendation names the policy fields to set rather than a rule that was never varied.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sluiceInProcess } from '../cli/test/process.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { loadScenario } from '../sim/scenario/load.js';
import { pointScenario } from './apply.js';
import { pointPolicyText } from './policy-vary.js';

const SCENARIO = join(REPO_ROOT, 'scenarios', 'worked-example-policy.yaml');
const POLICY = join(REPO_ROOT, 'scenarios', 'policies', 'worked-example.yaml');

describe('varying a policy field', () => {
  it('sets the field in a copy of the policy text, keeping comments and every other value', () => {
    const text = readFileSync(POLICY, 'utf8');
    const out = pointPolicyText(text, { 'policy.classes.interactive.guaranteed_seats': 14, fc_x: 3 });
    expect(out).toContain('# The worked example');
    const a = parse(text) as { classes: Record<string, { guaranteed_seats: number }> };
    const b = parse(out) as typeof a;
    expect(b.classes.interactive!.guaranteed_seats).toBe(14);
    b.classes.interactive!.guaranteed_seats = a.classes.interactive!.guaranteed_seats;
    expect(b).toEqual(a);
    expect(pointPolicyText(text, { fc_max_outstanding: 3 })).toBe(text);
  });

  it('gives each point its own policy and leaves the scenario untouched', async () => {
    const s = await loadScenario(SCENARIO);
    const before = s.policy!.text;
    const p = pointScenario(s, { 'policy.capacity_seats': 48 });
    expect((parse(p.policy!.text) as { capacity_seats: number }).capacity_seats).toBe(48);
    expect(s.policy!.text).toBe(before);
  });

  it('runs the grid on the policy: a field that binds moves the figures, and the recommendation names it', async () => {
    const r = await sluiceInProcess(
      'size',
      SCENARIO,
      '--vary',
      'policy.classes.interactive.guaranteed_seats=10,18',
      '--seeds',
      '1',
      '--workers',
      '1',
      '--json',
    );
    expect([r.code, r.stderr]).toEqual([0, '']);
    const out = JSON.parse(r.stdout) as {
      points: { params: Record<string, number>; figures: { shed_rate: number } }[];
      recommendation: { rule?: unknown; policy?: { file: string; set: Record<string, number> } };
    };
    const shed = (v: number) =>
      out.points.find((p) => p.params['policy.classes.interactive.guaranteed_seats'] === v)!.figures
        .shed_rate;
    // Fewer interactive seats: smaller tenant quotas, more sheds.
    expect(shed(10)).toBeGreaterThan(shed(18) + 0.05);
    expect(out.recommendation.rule).toBeUndefined();
    expect(out.recommendation.policy?.set).toEqual({ 'classes.interactive.guaranteed_seats': 18 });
    expect(out.recommendation.policy?.file).toMatch(/policies[/\\]worked-example\.yaml$/);
    const text = await sluiceInProcess(
      'size',
      SCENARIO,
      '--vary',
      'policy.classes.interactive.guaranteed_seats=18',
      '--seeds',
      '1',
      '--workers',
      '1',
    );
    expect(text.stdout).toContain('Policy to apply (set in ');
    expect(text.stdout).toContain('  classes.interactive.guaranteed_seats: 18');
    expect(text.stdout).not.toContain('Rule to apply');
  }, 120_000);

  it('refuses a path that names no number of the policy, naming the file and listing some that do', async () => {
    const r = await sluiceInProcess('size', SCENARIO, '--vary', 'policy.classes.nope.guaranteed_seats=1');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/worked-example\.yaml holds no number at classes\.nope\.guaranteed_seats/);
    expect(r.stderr).toContain('policy.capacity_seats');
    expect(r.stderr).not.toContain('policy.version');
  });

  it('refuses a point the policy would refuse, naming the point and the policy field', async () => {
    const r = await sluiceInProcess('size', SCENARIO, '--vary', 'policy.capacity_seats=30,40');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the point policy.capacity_seats=30 is not a valid policy');
    expect(r.stderr).toContain('is above capacity_seats 30');
  });

  it('refuses a rule field that changes nothing because fc_mode is off and the policy admits', async () => {
    const r = await sluiceInProcess('size', SCENARIO, '--vary', 'fc_max_outstanding=20,40');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("fc_max_outstanding changes nothing here: the rule's fc_mode is off");
  });

  it('refuses a policy field on a scenario without a policy', async () => {
    const r = await sluiceInProcess(
      'size',
      join(REPO_ROOT, 'scenarios', 'default.yaml'),
      '--vary',
      'policy.capacity_seats=10',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'policy.capacity_seats is a policy field, but the scenario has no gate.policy',
    );
  });
});
