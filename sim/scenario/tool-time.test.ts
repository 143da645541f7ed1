/**
 * The scenario checks of tool time: `tool_ms` and `tool_slowdown` are refused where they would
 * change nothing, a `tool_slowdown` is bounded like `engine_slowdown`, and a client with a tool
 * time may declare tool calls without a policy (its calls then take tool time).
 */
import { describe, expect, it } from 'vitest';
import { ScenarioError } from './errors.js';
import { parseScenarioText } from './load.js';

const BASE = `name: t
duration_s: 60
gate:
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, mode: 4, sse_mode: true, fc_mode: enforce, fc_max_outstanding: 16 }
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  arrival: { kind: poisson, rate_per_sec: 5 }
  tenants:
    - id: agent
      tool_ms: { kind: fixed, value: 800 }
      envelope: { class: agent, tool_calls: 3 }
    - id: chat
`;

function messageOf(text: string): string {
  try {
    parseScenarioText(text, 'x.yaml');
  } catch (err) {
    if (err instanceof ScenarioError) return err.message;
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('tool time in a scenario', () => {
  it('accepts tool calls with a tool time behind a plain gate, and a tool_slowdown', () => {
    const s = parseScenarioText(
      `${BASE}timeline:\n  - { at_s: 10, event: tool_slowdown, factor: 5, duration_s: 20 }\n`,
      'x.yaml',
    );
    expect(s.clients.tenants?.[0]?.envelope).toEqual({ class: 'agent', tool_calls: 3 });
    expect(s.timeline[0]).toEqual({ event: 'tool_slowdown', at_s: 10, factor: 5, duration_s: 20 });
  });

  it('bounds a tool_slowdown like an engine_slowdown, naming the field and value', () => {
    expect(messageOf(`${BASE}timeline:\n  - { at_s: 10, event: tool_slowdown, factor: 0.5 }\n`)).toMatch(
      /timeline\[0\]\.factor: 0\.5 is below the minimum 1/,
    );
    expect(
      messageOf(`${BASE}timeline:\n  - { at_s: 10, event: tool_slowdown, factor: 2, duration_s: 0 }\n`),
    ).toMatch(/timeline\[0\]\.duration_s: 0 /);
    expect(messageOf(`${BASE}timeline:\n  - { at_s: 60, event: tool_slowdown, factor: 2 }\n`)).toMatch(
      /timeline\[0\]\.at_s: 60 is not below duration_s \(60\)/,
    );
  });

  it('refuses a tool_slowdown when no client spends tool time', () => {
    const plain = `${BASE.replace('      tool_ms: { kind: fixed, value: 800 }\n', '').replace(', tool_calls: 3', '')}timeline:\n  - { at_s: 10, event: tool_slowdown, factor: 2 }\n`;
    expect(messageOf(plain)).toMatch(
      /timeline\[0\]\.event: slows tool calls, but no client spends tool time/,
    );
  });

  it('refuses a tool_ms that times no tool call', () => {
    const noCalls = BASE.replace(', tool_calls: 3', '');
    expect(messageOf(noCalls)).toMatch(
      /clients\.tenants\[0\]\.tool_ms: is given but the tenant declares no tool calls/,
    );
    const workload = BASE.replace('      tool_ms: { kind: fixed, value: 800 }\n', '').replace(
      '  tenants:\n',
      '  tool_ms: { kind: fixed, value: 800 }\n  tenants:\n',
    );
    // The agent tenant inherits it and declares calls: accepted.
    expect(parseScenarioText(workload, 'x.yaml').clients.tool_ms).toEqual({ kind: 'fixed', value: 800 });
    expect(messageOf(workload.replace(', tool_calls: 3', ''))).toMatch(
      /clients\.tool_ms: is given but no tenant that inherits it declares tool calls/,
    );
  });

  it('still refuses tool calls without a policy when the client has no tool time', () => {
    const text = BASE.replace('      tool_ms: { kind: fixed, value: 800 }\n', '');
    expect(messageOf(text)).toMatch(
      /clients\.tenants\[0\]\.envelope\.tool_calls: is given without gate\.policy/,
    );
  });
});
