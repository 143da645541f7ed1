import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScenarioError } from './errors.js';
import { loadScenario } from './load.js';

/** A scenario with a policy beside it; line numbers below refer to this text. */
const SCENARIO = `name: p
duration_s: 60
gate:
  policy: policy.yaml
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  arrival: { kind: poisson, rate_per_sec: 5 }
  tenants:
    - id: a
      envelope: { class: chat, deadline_ms: 1500, tool_calls: 2 }
    - id: b
`;

const POLICY = `version: 1
capacity_seats: 10
reserve: { seats: 2 }
classes:
  chat:
    priority: 100
    guaranteed_seats: 6
    queue: { max_count: 4, max_age_ms: 1000, max_cost_seats: 8 }
    deadline: { default_ms: 2000 }
envelope: { default_class: chat }
`;

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function errorOf(path: string): Promise<ScenarioError> {
  try {
    await loadScenario(path);
  } catch (err) {
    if (err instanceof ScenarioError) return err;
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('gate.policy', () => {
  it('reads the policy beside the scenario and carries the envelope inputs', async () => {
    const dir = dirWith({ 's.yaml': SCENARIO, 'policy.yaml': POLICY });
    const s = await loadScenario(join(dir, 's.yaml'));
    expect(s.policy?.file).toBe(join(dir, 'policy.yaml'));
    expect(s.policy?.classes).toEqual(['chat']);
    expect(s.policy?.text).toBe(POLICY);
    expect(s.clients.tenants?.[0]?.envelope).toEqual({ class: 'chat', deadline_ms: 1500, tool_calls: 2 });
  });

  it("reports the policy file's problems at their place in the policy file", async () => {
    const bad = POLICY.replace(
      '    guaranteed_seats: 6\n',
      '    guaranteed_seats: 6\n    lendble_pct: 10\n',
    ).replace('max_count: 4', 'max_count: -1');
    const dir = dirWith({ 's.yaml': SCENARIO, 'policy.yaml': bad });
    const err = await errorOf(join(dir, 's.yaml'));
    const pf = join(dir, 'policy.yaml');
    expect(err.message.split('\n')).toEqual([
      `${pf}:8:5: classes.chat.lendble_pct: unknown key (did you mean lendable_pct?)`,
      `${pf}:9:25: classes.chat.queue.max_count: -1 is below the minimum 0`,
    ]);
    expect(err.issues[0]).toMatchObject({ file: pf, line: 8, col: 5, path: 'classes.chat.lendble_pct' });
  });

  it('names a missing policy file at gate.policy', async () => {
    const dir = dirWith({ 's.yaml': SCENARIO });
    const err = await errorOf(join(dir, 's.yaml'));
    expect(err.message).toContain(`s.yaml:4:11: gate.policy: "policy.yaml" was not found`);
  });

  it('refuses a class the policy does not declare, listing the classes', async () => {
    const dir = dirWith({ 's.yaml': SCENARIO.replace('class: chat', 'class: batch'), 'policy.yaml': POLICY });
    const err = await errorOf(join(dir, 's.yaml'));
    expect(err.message).toBe(
      `${join(dir, 's.yaml')}:14:26: clients.tenants[0].envelope.class: "batch" is not a class of ${join(dir, 'policy.yaml')}`,
    );
    expect(err.issues[0]?.expected).toBe('one of chat');
  });

  it('without a policy takes class and deadline_ms (labels of the outcomes) and refuses the rest', async () => {
    const plain = SCENARIO.replace('  policy: policy.yaml\n', '');
    const dir = dirWith({ 's.yaml': plain, 'ok.yaml': plain.replace(', tool_calls: 2', '') });
    const err = await errorOf(join(dir, 's.yaml'));
    expect(err.message).toBe(
      `${join(dir, 's.yaml')}:13:63: clients.tenants[0].envelope.tool_calls: is given without gate.policy (only a policy reads it)`,
    );
    const s = await loadScenario(join(dir, 'ok.yaml'));
    expect(s.policy).toBeUndefined();
    expect(s.clients.tenants?.[0]?.envelope).toEqual({ class: 'chat', deadline_ms: 1500 });
  });

  it('checks each envelope field with its bound', async () => {
    const dir = dirWith({
      's.yaml': SCENARIO.replace('tool_calls: 2', 'tool_calls: 2000, prompt_estimate_share: 1.5, route: v1'),
      'policy.yaml': POLICY,
    });
    const lines = (await errorOf(join(dir, 's.yaml'))).message.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toMatch(/envelope\.tool_calls: 2000 is above the maximum 1000/);
    expect(lines.join('\n')).toMatch(/envelope\.prompt_estimate_share: 1\.5 is above the maximum 1/);
    expect(lines.join('\n')).toMatch(/envelope\.route: "v1" is not a path/);
  });
  it('takes a dependency_outage of a depends_on name, and refuses another name listing the dependencies', async () => {
    const deps = POLICY.replace(
      '    deadline: { default_ms: 2000 }\n',
      '    deadline: { default_ms: 2000 }\n    depends_on: [tools, search]\n',
    );
    const outage = (name: string) =>
      `${SCENARIO}timeline:\n  - { at_s: 10, event: dependency_outage, name: ${name}, duration_s: 20 }\n`;
    const dir = dirWith({ 'ok.yaml': outage('search'), 's.yaml': outage('tool'), 'policy.yaml': deps });
    const s = await loadScenario(join(dir, 'ok.yaml'));
    expect(s.timeline).toEqual([{ at_s: 10, event: 'dependency_outage', name: 'search', duration_s: 20 }]);
    const err = await errorOf(join(dir, 's.yaml'));
    const pf = join(dir, 'policy.yaml');
    expect(err.message).toBe(
      `${join(dir, 's.yaml')}:17:49: timeline[0].name: "tool" is not a dependency of ${pf}: no class lists it in depends_on (the dependencies are tools, search)`,
    );
    expect(err.issues[0]?.expected).toBe('one of tools, search');
    // A policy without depends_on says so.
    const none = dirWith({ 's.yaml': outage('tools'), 'policy.yaml': POLICY });
    expect((await errorOf(join(none, 's.yaml'))).message).toMatch(
      /timeline\[0\]\.name: "tools" is not a dependency of .*policy\.yaml: no class lists it in depends_on \(no class has depends_on\)$/,
    );
  });

  it('refuses a dependency_outage without gate.policy', async () => {
    const plain = SCENARIO.replace('  policy: policy.yaml\n', '').replace(', tool_calls: 2', '');
    const dir = dirWith({
      's.yaml': `${plain}timeline:\n  - { at_s: 10, event: dependency_outage, name: tools }\n`,
    });
    expect((await errorOf(join(dir, 's.yaml'))).message).toBe(
      `${join(dir, 's.yaml')}:16:24: timeline[0].event: "dependency_outage" needs gate.policy (a dependency is a class's depends_on in the policy); the scenario has none`,
    );
  });

  describe('gate.fallback_pools', () => {
    const pooled = POLICY.replace(
      '    deadline: { default_ms: 2000 }\n',
      '    deadline: { default_ms: 2000 }\n    degrade:\n      - { kind: max_tokens, max_output_tokens: 64 }\n      - { kind: pool, pool: small }\n',
    );
    const withPools = (pools: string) =>
      SCENARIO.replace('  policy: policy.yaml\n', `  policy: policy.yaml\n  fallback_pools:\n${pools}`);
    const SMALL = '    small:\n      engines: [{ profile: llama-3.1-8b-h100, count: 2, max_num_seqs: 32 }]\n';

    it('resolves a declared pool: its own engines, addresses and indexes after the pool', async () => {
      const dir = dirWith({ 's.yaml': withPools(SMALL), 'policy.yaml': pooled });
      const s = await loadScenario(join(dir, 's.yaml'));
      expect(s.endpoints).toHaveLength(1);
      expect(s.fallbackPools).toHaveLength(1);
      const fp = s.fallbackPools![0]!;
      expect(fp.name).toBe('small');
      expect(fp.engines.map((g) => [g.name, g.count, g.max_num_seqs])).toEqual([
        ['llama-3.1-8b-h100', 2, 32],
      ]);
      expect(fp.endpoints.map((e) => [e.index, e.id, e.role])).toEqual([
        [1, '10.100.0.1:8000', 'normal'],
        [2, '10.100.0.2:8000', 'normal'],
      ]);
    });

    it('refuses a pool degrade naming no fallback pool, at its place in the policy file', async () => {
      const dir = dirWith({ 's.yaml': SCENARIO, 'policy.yaml': pooled });
      const err = await errorOf(join(dir, 's.yaml'));
      const pf = join(dir, 'policy.yaml');
      expect(err.message).toBe(
        `${pf}:12:29: classes.chat.degrade[1].pool: "small" is not a fallback pool of the scenario: declare it in gate.fallback_pools (it declares none)`,
      );
      expect(err.issues[0]).toMatchObject({
        file: pf,
        line: 12,
        col: 29,
        path: 'classes.chat.degrade[1].pool',
      });
      expect(err.issues[0]?.expected).toBe('gate.fallback_pools.small with its engines');
      // Another name declared: the error lists the declared ones.
      const other = dirWith({
        's.yaml': withPools(SMALL.replace('small:', 'tiny:')),
        'policy.yaml': pooled,
      });
      const lines = (await errorOf(join(other, 's.yaml'))).message.split('\n');
      expect(lines).toContain(
        `${join(other, 'policy.yaml')}:12:29: classes.chat.degrade[1].pool: "small" is not a fallback pool of the scenario: declare it in gate.fallback_pools (the fallback pools are tiny)`,
      );
      // ...and the declared pool no degrade names is refused at its own place.
      expect(
        lines.some((l) =>
          /:7:7: gate\.fallback_pools\.tiny: "tiny" is named by no pool degrade of .*policy\.yaml \(its pool degrades name small\)$/.test(
            l,
          ),
        ),
      ).toBe(true);
    });

    it('refuses fallback pools without gate.policy', async () => {
      const plain = withPools(SMALL).replace('  policy: policy.yaml\n', '').replace(', tool_calls: 2', '');
      const dir = dirWith({ 's.yaml': plain });
      expect((await errorOf(join(dir, 's.yaml'))).message).toMatch(
        /s\.yaml:\d+:\d+: gate\.fallback_pools: is given without gate\.policy \(only a policy degrades to a pool\)$/,
      );
    });

    it('checks the fields of a fallback pool with their bounds', async () => {
      const bad =
        '    small:\n      engines: [{ profile: llama-3.1-8b-h100, count: 0, role: prefill }]\n      max_in_flight: 3\n';
      const dir = dirWith({ 's.yaml': withPools(bad), 'policy.yaml': pooled });
      const msg = (await errorOf(join(dir, 's.yaml'))).message;
      expect(msg).toMatch(/gate\.fallback_pools\.small\.max_in_flight: unknown key/);
      expect(msg).toMatch(/gate\.fallback_pools\.small\.engines\[0\]\.count: 0 is below the minimum 1/);
      const role = dirWith({
        's.yaml': withPools(SMALL.replace('max_num_seqs: 32', 'role: decode')),
        'policy.yaml': pooled,
      });
      expect((await errorOf(join(role, 's.yaml'))).message).toMatch(
        /gate\.fallback_pools\.small\.engines\[0\]\.role: "decode" is refused in a fallback pool \(a degraded request runs whole on one engine\)$/,
      );
      const name = dirWith({ 's.yaml': withPools(SMALL.replace('small:', 'Small:')), 'policy.yaml': pooled });
      expect((await errorOf(join(name, 's.yaml'))).message).toMatch(/"Small" is not a pool name/);
    });
  });
});
