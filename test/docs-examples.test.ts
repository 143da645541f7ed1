/**
 * Every guide runs as written: each input file a guide names under docs/examples/ is shipped,
 * and each parses as the command that reads it expects.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../gate/index.js';
import { loadApiKeys } from '../proxy/credentials.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { loadScenario } from '../sim/scenario/load.js';

const DOCS = join(REPO_ROOT, 'docs');
const EXAMPLES = join(DOCS, 'examples');
const json = (file: string): unknown => JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8'));

describe('the guides and docs/examples', () => {
  it('ship every docs/examples file a guide names', () => {
    const named = readdirSync(DOCS)
      .filter((f) => f.endsWith('.md'))
      .flatMap((f) =>
        [...readFileSync(join(DOCS, f), 'utf8').matchAll(/docs\/examples\/[\w./-]+\w/g)].map((m) => m[0]),
      );
    expect(named.length).toBeGreaterThan(0);
    for (const path of new Set(named)) expect(existsSync(join(REPO_ROOT, path)), path).toBe(true);
  });

  it('give the observe guide a rule, a proxy config holding it, API keys and traffic that load', async () => {
    const rule = json('observe/rule.json') as { serviceArguments: Record<string, unknown> };
    expect(rule.serviceArguments.fc_mode).toBe('observe');
    expect(json('observe/config.json')).toEqual({ lbAttr: [rule] });
    const keys = loadApiKeys(join(EXAMPLES, 'observe', 'keys.json'));
    const traffic = await loadScenario(join(EXAMPLES, 'observe', 'traffic.yaml'));
    // Every tenant of the traffic sends a key the proxy resolves to that tenant.
    const tenants = readFileSync(join(EXAMPLES, 'observe', 'traffic.yaml'), 'utf8').matchAll(
      /id: (\w+)\s*,?\s*api_key: ([\w-]+)/g,
    );
    const pairs = [...tenants].map((m) => [m[1], m[2]]);
    expect(pairs.length).toBe(3);
    for (const [tenant, key] of pairs) expect(keys.get(key ?? '')).toBe(tenant);
    expect(traffic.duration_s).toBe(60);
  });

  it('give the policy guide a proxy config, API keys and a policy that load, on the ports its commands use', () => {
    const guide = readFileSync(join(DOCS, 'guide-policy.md'), 'utf8');
    const config = json('policy/config.json') as {
      lbAttr: { serviceArguments: Record<string, unknown>; endpoints: { targetPort: number }[] }[];
    };
    const rule = config.lbAttr[0]!;
    expect(rule.serviceArguments.fc_mode).toBe('enforce');
    expect(guide).toContain(`127.0.0.1:${rule.serviceArguments.port}/v1/chat/completions`);
    expect(guide).toContain(`sluice engine --port ${rule.endpoints[0]!.targetPort}`);
    const keys = loadApiKeys(join(EXAMPLES, 'policy', 'keys.json'));
    expect(keys.get('sk-batch-1')).toBe('batch');
    expect(keys.get('sk-chat-1')).toBe('chat');
    const file = join(REPO_ROOT, 'scenarios', 'policies', 'worked-example.yaml');
    const policy = parsePolicy(readFileSync(file, 'utf8'), file);
    expect(policy.byName.has('batch')).toBe(true);
    // The worked example behind the proxy: a rule taking JWTs, its own ceilings off as in the scenario.
    const jwt = json('policy/worked-example-jwt.json') as typeof config;
    const jwtRule = jwt.lbAttr[0]!;
    expect(jwtRule.serviceArguments).toMatchObject({ api_key_auth: 'jwt', fc_mode: 'off' });
    expect(guide).toContain(`--target http://127.0.0.1:${jwtRule.serviceArguments.port} `);
    for (const e of jwtRule.endpoints) expect(guide).toContain(`sluice engine --port ${e.targetPort} `);
    expect(policy.document.envelope.tenant_claim).toBe('sub');
    expect(policy.document.envelope.class_claim).toBe('sluice_class');
  });
});
