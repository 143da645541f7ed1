/**
 * What an engine group carries besides its step model: the frontend delay (and its jitter)
 * belongs to the deployment profiles; the abstract engines (exponential, fitted, recorded)
 * have none unless the group sets it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Simulator } from '../kernel/simulator.js';
import { isScenarioError } from '../scenario/errors.js';
import { parseScenarioText } from '../scenario/load.js';
import { buildEngines } from './engines.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const scenario = (engines: string): string => `name: t
duration_s: 10
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
      fc_mode: "off"
engines:
${engines}
clients:
  arrival: { kind: poisson, rate_per_sec: 1 }
`;

function nodes(engines: string, seed = 1) {
  const s = parseScenarioText(scenario(engines), 'x.yaml');
  return buildEngines(new Simulator(), seed, s.engines, s.endpoints, () => {});
}

const reads = (n: { apiOverheadMs: number }, k: number): number[] =>
  Array.from({ length: k }, () => n.apiOverheadMs);

describe('engine groups in a run', () => {
  it('an exponential engine has no frontend delay unless its group sets one', () => {
    const [plain] = nodes('  - { profile: exponential, mean_service_ms: 100 }');
    expect(reads(plain as { apiOverheadMs: number }, 5)).toEqual([0, 0, 0, 0, 0]);
    const [set] = nodes('  - { profile: exponential, mean_service_ms: 100, api_overhead_ms: 5 }');
    expect(reads(set as { apiOverheadMs: number }, 3)).toEqual([5, 5, 5]);
  });

  it('a fitted engine has no frontend delay unless its group sets one', () => {
    const [n] = nodes('  - { profile: fitted, fitted: { a: 1, b: 0, c: 0, d: 0 } }');
    expect(reads(n as { apiOverheadMs: number }, 3)).toEqual([0, 0, 0]);
  });

  it("a deployment profile's frontend delay is its 4 ms, jittered per request from the seed", () => {
    const [a] = nodes('  - { profile: llama-3.1-8b-h100 }');
    const [b] = nodes('  - { profile: llama-3.1-8b-h100 }');
    const [c] = nodes('  - { profile: llama-3.1-8b-h100 }', 2);
    const ra = reads(a as { apiOverheadMs: number }, 200);
    expect(ra).toEqual(reads(b as { apiOverheadMs: number }, 200));
    expect(ra).not.toEqual(reads(c as { apiOverheadMs: number }, 200));
    const mean = ra.reduce((x, y) => x + y, 0) / ra.length;
    expect(mean).toBeGreaterThan(3.8);
    expect(mean).toBeLessThan(4.2);
    expect(new Set(ra).size).toBeGreaterThan(100);
  });

  it('api_jitter_sigma 0 gives the constant delay', () => {
    const [n] = nodes('  - { profile: llama-3.1-8b-h100, api_jitter_sigma: 0 }');
    expect(reads(n as { apiOverheadMs: number }, 3)).toEqual([4, 4, 4]);
  });

  it("a profile_file's calibrated terms replace the profile's, and a run uses them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-pf-'));
    const file = join(dir, 'my-h100.json');
    const terms = { memEfficiency: 0.7, hostPerSeqMs: 2, mfu: 0.4, apiOverheadMs: 7 };
    writeFileSync(file, JSON.stringify({ base: 'llama-3.1-8b-h100', terms }));
    const group = `  - { profile: llama-3.1-8b-h100, profile_file: ${JSON.stringify(file)}, api_jitter_sigma: 0 }`;
    const [n] = nodes(group);
    expect(reads(n as { apiOverheadMs: number }, 2)).toEqual([7, 7]);
    const slow = await runScenario(parseScenarioText(scenario(group), 'x.yaml'), {
      sink: new MemorySink(false),
    });
    const plain = await runScenario(
      parseScenarioText(scenario('  - { profile: llama-3.1-8b-h100, api_jitter_sigma: 0 }'), 'x.yaml'),
      {
        sink: new MemorySink(false),
      },
    );
    expect(slow.ttft_ms.p50).toBeGreaterThan(plain.ttft_ms.p50 as number);
  });

  it('a profile_file for another base, or with a bad term, is a scenario error naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-pf-'));
    const other = join(dir, 'a100.json');
    writeFileSync(other, JSON.stringify({ base: 'llama-3.1-8b-a100-40g', terms: {} }));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ base: 'llama-3.1-8b-h100', terms: { memEfficiency: 3 } }));
    const message = (f: string): string => {
      try {
        parseScenarioText(
          scenario(`  - { profile: llama-3.1-8b-h100, profile_file: ${JSON.stringify(f)} }`),
          'x.yaml',
        );
      } catch (e) {
        expect(isScenarioError(e)).toBe(true);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message(other)).toMatch(/engines\[0\]\.profile_file: .*base is "llama-3\.1-8b-a100-40g"/);
    expect(message(bad)).toMatch(/terms\.memEfficiency is 3/);
    expect(message(join(dir, 'none.json'))).toMatch(/was not found/);
  });

  it("lengthens a deployment engine's frontend delay while it streams, unless the group sets frontend_per_token_ms: 0", async () => {
    // One engine under 20 req/s of ~256+128 tokens streams ~1.3 tokens/ms: at 0.55 ms per
    // token its 4 ms frontend takes ~13-17 ms, and TTFT p50 grows by about the difference.
    const busy = (extra: string): string =>
      scenario(`  - { profile: llama-3.1-8b-h100, api_jitter_sigma: 0${extra} }`).replace(
        'rate_per_sec: 1 }',
        'rate_per_sec: 20 }\n  prompt_tokens: { kind: fixed, value: 256 }\n  output_tokens: { kind: uniform, low: 96, high: 160 }',
      );
    const run = async (extra: string) =>
      (await runScenario(parseScenarioText(busy(extra), 'x.yaml'), { sink: new MemorySink(false) })).ttft_ms
        .p50 as number;
    const loaded = await run('');
    const constant = await run(', frontend_per_token_ms: 0');
    expect(loaded - constant).toBeGreaterThan(5);
    expect(loaded - constant).toBeLessThan(30);
    // A tenth of the work per token: a tenth of the load, about a millisecond more.
    const light = await run(', frontend_per_token_ms: 0.055');
    expect(light - constant).toBeLessThan(3);
  });

  it('refuses a frontend_per_token_ms out of bounds, naming the field and the bound', () => {
    expect(() =>
      parseScenarioText(scenario('  - { profile: llama-3.1-8b-h100, frontend_per_token_ms: 3 }'), 'x.yaml'),
    ).toThrow(/engines\[0\]\.frontend_per_token_ms.*3.*2/);
  });
});
