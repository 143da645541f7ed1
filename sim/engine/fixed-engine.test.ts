import { describe, expect, it } from 'vitest';
import { FixedEngine } from './fixed-engine.js';
import type { EngineRequest } from './types.js';

function engine(cap = 2, slowdown = () => 1) {
  return new FixedEngine({
    modelName: 'm',
    ttftMs: 50,
    itlMs: 10,
    maxConcurrency: cap,
    maxModelLen: 100,
    slowdown,
  });
}

/** Steps at every nextStepAt until idle; returns token times per request id. */
function drain(e: FixedEngine): Map<string, number[]> {
  const times = new Map<string, number[]>();
  for (let at = e.nextStepAt(); at !== null; at = e.nextStepAt()) {
    const out = e.step(at);
    for (const r of out.tokens) times.set(r.id, [...(times.get(r.id) ?? []), at]);
  }
  return times;
}

const req = (id: string, out = 3): EngineRequest => ({ id, promptTokens: 5, outputTokens: out });

describe('FixedEngine', () => {
  it('emits the first token after ttft and the rest every itl', () => {
    const e = engine();
    e.submit(req('a'), 0);
    expect(drain(e).get('a')).toEqual([50, 60, 70]);
    expect(e.metrics().requestSuccess.stop).toBe(1);
  });

  it('queues FIFO beyond the concurrency cap', () => {
    const e = engine(2);
    for (const id of ['a', 'b', 'c']) e.submit(req(id), 0);
    e.step(0);
    expect([e.numRunning, e.numWaiting]).toEqual([2, 1]);
    expect(e.metrics().numRequestsWaiting).toBe(1);
    const t = drain(e);
    expect(t.get('a')).toEqual([50, 60, 70]);
    expect(t.get('c')).toEqual([120, 130, 140]);
  });

  it('admits the next waiting request when a running one is aborted', () => {
    const e = engine(1);
    e.submit(req('a'), 0);
    e.submit(req('b'), 0);
    e.step(0);
    expect(e.abort('a', 20)?.id).toBe('a');
    expect(e.nextStepAt()).toBe(20);
    expect(drain(e).get('b')).toEqual([70, 80, 90]);
    expect(e.metrics().requestSuccess.abort).toBe(1);
  });

  it('scales ttft and itl by the slowdown', () => {
    const e = engine(1, () => 2);
    e.submit(req('a'), 0);
    expect(drain(e).get('a')).toEqual([100, 120, 140]);
  });

  it('refuses prompts that do not fit max_model_len', () => {
    expect(engine().submit({ id: 'x', promptTokens: 99, outputTokens: 2 }, 0)).toEqual({
      accepted: false,
      reason: 'too_long',
    });
  });
});
