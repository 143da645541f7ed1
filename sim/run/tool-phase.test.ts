/**
 * The tool phase: an admitted request's tool calls hold its gate permit or policy seats for their
 * time (times the tool slowdown) without an engine; a client that leaves during them gives the
 * permit or seats back at once; and a tool time of 0 changes nothing in the run.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Simulator } from '../kernel/simulator.js';
import { REPO_ROOT } from '../scenario/data-files.js';
import { parseScenarioText } from '../scenario/load.js';
import type { RequestRecord, RunSummary } from './records.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';
import { type ToolCaller, ToolPhase } from './tool-phase.js';

const RULE =
  '{ externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: enforce, fc_max_outstanding: 1, fc_max_queue_depth: 8, fc_max_queue_wait_ms: 60000 }';

/** One engine behind a gate of one permit; `clients` and `timeline` are YAML lines (indented 2). */
function scenario(clients: string, timeline = '', gate = `  rule:\n    serviceArguments: ${RULE}`): string {
  return `
name: tool-phase
seed: 5
duration_s: 60
gate:
${gate}
engines:
  - profile: llama-3.1-8b-h100
    count: 1
clients:
  prompt_tokens: { kind: fixed, value: 256 }
  output_tokens: { kind: fixed, value: 16 }
${clients}
${timeline}`;
}

async function run(text: string): Promise<{ summary: RunSummary; records: RequestRecord[] }> {
  const sink = new MemorySink(true);
  const summary = await runScenario(
    parseScenarioText(text, join(REPO_ROOT, 'scenarios', 'tool-phase.yaml')),
    {
      sink,
    },
  );
  expect(summary.conservation_ok).toBe(true);
  expect(summary.anomalies.underflow).toBe(0);
  expect(summary.anomalies.unknown_permit).toBe(0);
  return { summary, records: [...sink.requests].sort((a, b) => a.id - b.id) };
}

const num = (v: number | ''): number => {
  if (v === '') throw new Error('no value');
  return v;
};

describe('the tool phase on its own clock', () => {
  interface Call extends ToolCaller {
    d: { toolCallsMs?: readonly number[] };
  }
  const caller = (ms: number[]): Call => ({ d: { toolCallsMs: ms }, toolEvent: null, toolCallsDone: 0 });

  it('runs the calls one after another, each scaled by the slowdown in force when it starts', () => {
    const sim = new Simulator();
    const ended: number[] = [];
    const tools = new ToolPhase<Call>(sim, () => ended.push(sim.now()));
    expect(tools.start(caller([100, 200]))).toBe(true);
    sim.schedule(50, () => {
      tools.slowdown = 5;
    });
    sim.run();
    // The first call started at 1x (100 ms); the second at 5x (1000 ms).
    expect(ended).toEqual([1100]);
  });

  it('starts nothing for no calls or calls of 0 ms, and a cancelled phase never ends', () => {
    const sim = new Simulator();
    let ended = 0;
    const tools = new ToolPhase<Call>(sim, () => ended++);
    expect(tools.start(caller([]))).toBe(false);
    expect(tools.start(caller([0, 0]))).toBe(false);
    expect(sim.pendingCount).toBe(0);
    const c = caller([300]);
    tools.start(c);
    sim.schedule(100, () => tools.cancel(c));
    sim.run();
    expect(ended).toBe(0);
    expect(c.toolEvent).toBeNull();
  });
});

describe('the tool phase in a run', () => {
  // Two requests 100 ms apart behind one permit, each making 3 tool calls of 500 ms.
  const TWO = `  arrival: { kind: trace, at_ms: [0, 100] }
  envelope: { class: agent, tool_calls: 3 }`;

  it('holds the permit for the tool time, without the engine', async () => {
    const plain = await run(
      scenario('  arrival: { kind: trace, at_ms: [0, 100] }\n  envelope: { class: agent }'),
    );
    const tools = await run(scenario(`${TWO}\n  tool_ms: { kind: fixed, value: 500 }`));
    const [p1, p2] = plain.records;
    const [t1, t2] = tools.records;
    expect(t1!.outcome).toBe('completed');
    // The first request's answer comes the tool time (1.5 s) later than without tools.
    expect(num(t1!.ttft_ms) - num(p1!.ttft_ms)).toBeCloseTo(1500, 3);
    // The second waits for the permit through the first one's tool calls and generation.
    expect(num(t2!.queue_wait_ms)).toBeCloseTo(num(p2!.queue_wait_ms) + 1500, 3);
  });

  it('multiplies the calls that start during a tool_slowdown', async () => {
    const plain = await run(scenario(`${TWO}\n  tool_ms: { kind: fixed, value: 500 }`));
    const slow = await run(
      scenario(
        `${TWO}\n  tool_ms: { kind: fixed, value: 500 }`,
        'timeline:\n  - { at_s: 0, event: tool_slowdown, factor: 4, duration_s: 1 }',
      ),
    );
    // The first request's first call starts at 0 s, during the slowdown (4x: 2 s instead of 0.5);
    // its next two start at 2 and 2.5 s, after the slowdown ended at 1 s (0.5 s each).
    expect(num(slow.records[0]!.ttft_ms) - num(plain.records[0]!.ttft_ms)).toBeCloseTo(1500, 3);
  });

  it('gives the permit back when the client leaves during its tool calls', async () => {
    // Each client disconnects 1 s after sending: the first one during its tool calls.
    const { records } = await run(
      scenario(`${TWO}\n  tool_ms: { kind: fixed, value: 500 }\n  deadline_ms: 1000`),
    );
    const [r1, r2] = records;
    expect(r1!.outcome).toBe('cancelled');
    expect(r1!.ttft_ms).toBe('');
    expect(r1!.wasted_tokens).toBe(0);
    // The second request gets the permit the moment the first client leaves (at 1 s).
    expect(num(r2!.queue_wait_ms)).toBeCloseTo(900, 3);
    expect(r2!.outcome).toBe('cancelled');
  });

  it('gives the policy seats back when the client leaves during its tool calls', async () => {
    const policy = join(REPO_ROOT, 'scenarios', 'policies', 'worked-example.yaml');
    const gate = `  policy: ${policy}\n  rule:\n    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: "off" }`;
    // One work-order tenant: its class quota (half the class's 8 seats) holds one request of 4
    // seats. The third request comes at 1.2 s, while the first would still be in its tools.
    const clients = (deadline: string) => `  tenants:
    - id: ops
      arrival: { kind: trace, at_ms: [0, 100, 1200] }
      tool_ms: { kind: fixed, value: 500 }
      envelope: { class: work-order, tool_calls: 3 }
${deadline}`;
    const held = await run(scenario(clients(''), '', gate));
    const left = await run(scenario(clients('      deadline_ms: 1000'), '', gate));
    const third = (rs: RequestRecord[]) => rs.find((r) => r.sent_ms === 1200 && r.attempt === 1)!;
    expect(third(held.records).reason).toBe('tenant_quota');
    expect(left.records[0]!.outcome).toBe('cancelled');
    expect(third(left.records).disposition).toBe('admit');
  });

  it('changes nothing with a tool time of 0', async () => {
    const none = await run(scenario(`${TWO}`.replace(', tool_calls: 3', '')));
    const zero = await run(scenario(`${TWO}\n  tool_ms: { kind: fixed, value: 0 }`));
    expect(zero.records).toEqual(none.records);
    expect(JSON.stringify(zero.summary)).toBe(JSON.stringify(none.summary));
  });
});
