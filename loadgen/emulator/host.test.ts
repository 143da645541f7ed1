import { describe, expect, it } from 'vitest';
import { FixedEngine } from '../../sim/engine/fixed-engine.js';
import { ScaledClock } from './clock.js';
import { type HostedRequest, RealClockEngineHost } from './host.js';

describe('the emulator host frontend delay', () => {
  it('hands requests to the engine in due order when a load-dependent delay lets a later one overtake', async () => {
    const engine = new FixedEngine<HostedRequest>({
      modelName: 'm',
      ttftMs: 1,
      itlMs: 1,
      maxConcurrency: 8,
      maxModelLen: 4096,
    });
    const order: string[] = [];
    const submit = engine.submit.bind(engine);
    engine.submit = (r, at) => {
      order.push(r.id);
      return submit(r, at);
    };
    // The first request meets a busy frontend (60 ms), the second an idle one (5 ms).
    const delays = [60, 5];
    const host = new RealClockEngineHost(engine, new ScaledClock(1), 5, () => delays.shift() ?? 5);
    const done: string[] = [];
    const req = (id: string): HostedRequest => ({
      id,
      promptTokens: 8,
      outputTokens: 2,
      arrivalMs: 0,
      sink: { token: () => {}, finish: () => done.push(id), reject: () => done.push(`${id}!`) },
    });
    expect(host.submit(req('slow'))).toBeNull();
    expect(host.submit(req('fast'))).toBeNull();
    for (let i = 0; i < 100 && done.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    host.close();
    expect(order).toEqual(['fast', 'slow']);
    expect(done).toEqual(['fast', 'slow']);
  });
});
