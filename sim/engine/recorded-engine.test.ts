import { describe, expect, it } from 'vitest';
import { RecordedEngine, type RecordedEngineRequest } from './recorded-engine.js';

const req = (id: string, serviceMs?: number, ttftMs?: number): RecordedEngineRequest => ({
  id,
  promptTokens: 10,
  outputTokens: 5,
  ...(serviceMs === undefined ? {} : { serviceMs }),
  ...(ttftMs === undefined ? {} : { ttftMs }),
});

describe('recorded-timing engine', () => {
  it('gives each request its recorded first token and end, however many run at once', () => {
    const e = new RecordedEngine({ modelName: 'r' });
    e.submit(req('a', 1000, 100), 0);
    e.submit(req('b', 300, 50), 10);
    const seen: string[] = [];
    for (let t = e.nextStepAt(); t !== null; t = e.nextStepAt()) {
      const o = e.step(t);
      for (const r of o.firstTokens) seen.push(`${t} first ${r.id}`);
      for (const f of o.finished) seen.push(`${t} end ${f.request.id}`);
    }
    expect(seen).toEqual(['60 first b', '100 first a', '310 end b', '1000 end a']);
    expect(e.progress('a')).toBeUndefined();
  });

  it('gives a request without a record the mean of those seen, and drops an aborted one', () => {
    const e = new RecordedEngine({ modelName: 'r', defaultServiceMs: 50 });
    e.submit(req('x'), 0);
    expect(e.nextStepAt()).toBe(50);
    e.submit(req('a', 200, 20), 0);
    e.submit(req('b', 400, 40), 0);
    e.submit(req('c'), 0);
    e.abort('x', 1);
    const ends: [string, number][] = [];
    for (let t = e.nextStepAt(); t !== null; t = e.nextStepAt()) {
      for (const f of e.step(t).finished) ends.push([f.request.id, t]);
    }
    expect(ends).toEqual([
      ['a', 200],
      ['c', 300],
      ['b', 400],
    ]);
  });
});

describe('recorded-timing engine on a microsecond clock', () => {
  it('puts due times on whole microseconds, so a host stepping at the rounded time makes progress', () => {
    const e = new RecordedEngine({ modelName: 'r' });
    e.submit(req('a', 77.5384, 46.9851), 12345.678901);
    expect(e.nextStepAt()).toBe(12392.664);
    const o = e.step(12392.664);
    expect(o.firstTokens.map((r) => r.id)).toEqual(['a']);
    expect(e.nextStepAt()).toBe(12423.217);
  });
});
