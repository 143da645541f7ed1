import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { Simulator } from '../kernel/simulator.js';
import { ExponentialServerEngine } from './exponential-engine.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { SimEngineHost } from './sim-host.js';

function meanMs(h: EngineMetricsSnapshot['requestQueueTimeSeconds']): number {
  return (h.sum / h.count) * 1000;
}

/** Erlang C mean wait in queue for M/M/c, in the unit of `meanServiceMs`. */
function erlangCWaitMs(servers: number, arrivalsPerMs: number, meanServiceMs: number): number {
  const a = arrivalsPerMs * meanServiceMs;
  const rho = a / servers;
  let term = 1;
  let sum = 0;
  for (let k = 0; k < servers; k++) {
    sum += term;
    term *= a / (k + 1);
  }
  const tail = term / (1 - rho);
  const pWait = tail / (sum + tail);
  return pWait / (servers / meanServiceMs - arrivalsPerMs);
}

/** Poisson arrivals into one exponential engine; returns its metrics at the end. */
function runMmc(seed: number, servers: number, arrivalsPerMs: number, meanServiceMs: number, n: number) {
  const sim = new Simulator();
  const engine = new ExponentialServerEngine({
    modelName: 'mmc',
    servers,
    meanServiceMs,
    rng: rngStream(seed, 'service'),
  });
  const host = new SimEngineHost(sim, engine, () => {});
  const arrivals = rngStream(seed, 'arrivals');
  let i = 0;
  const arrive = (): void => {
    host.submit({ id: String(i), promptTokens: 1, outputTokens: 1 });
    if (++i < n) sim.after(arrivals.exponential(arrivalsPerMs), arrive);
  };
  sim.after(arrivals.exponential(arrivalsPerMs), arrive);
  sim.run();
  return engine.metrics();
}

describe('exponential-server engine', () => {
  it('service times have the configured mean (within 2% over 50k requests)', () => {
    const m = runMmc(7, 4, 0.2, 10, 50_000);
    expect(m.requestSuccess.stop).toBe(50_000);
    expect(Math.abs(meanMs(m.requestInferenceTimeSeconds) / 10 - 1)).toBeLessThan(0.02);
  });

  it('M/M/1 at ρ = 0.5 waits the textbook ρ/(μ − λ) = 10 ms in queue (within 6%)', () => {
    const m = runMmc(11, 1, 0.05, 10, 100_000);
    expect(Math.abs(meanMs(m.requestQueueTimeSeconds) / 10 - 1)).toBeLessThan(0.06);
  });

  it('M/M/4 at ρ = 0.75 matches the Erlang C mean wait (≈ 5.09 ms, within 6%)', () => {
    const want = erlangCWaitMs(4, 0.3, 10);
    expect(want).toBeCloseTo(5.0943, 3);
    const m = runMmc(13, 4, 0.3, 10, 100_000);
    expect(Math.abs(meanMs(m.requestQueueTimeSeconds) / want - 1)).toBeLessThan(0.06);
  });

  it('never serves more than c at once', () => {
    const engine = new ExponentialServerEngine({
      modelName: 'm',
      servers: 2,
      meanServiceMs: 5,
      rng: rngStream(1, 's'),
    });
    for (const id of ['a', 'b', 'c', 'd']) engine.submit({ id, promptTokens: 1, outputTokens: 1 }, 0);
    engine.step(0);
    expect([engine.numRunning, engine.numWaiting]).toEqual([2, 2]);
    let finished = 0;
    for (let t = engine.nextStepAt(); t !== null; t = engine.nextStepAt()) {
      finished += engine.step(t).finished.length;
      expect(engine.numRunning).toBeLessThanOrEqual(2);
    }
    expect(finished).toBe(4);
  });

  it('serves the waiting line first-come first-served', () => {
    const engine = new ExponentialServerEngine({
      modelName: 'm',
      servers: 1,
      meanServiceMs: 5,
      rng: rngStream(1, 's'),
    });
    for (const id of ['a', 'b', 'c', 'd']) engine.submit({ id, promptTokens: 1, outputTokens: 1 }, 0);
    const order: string[] = [];
    for (let t = engine.nextStepAt(); t !== null; t = engine.nextStepAt()) {
      for (const f of engine.step(t).finished) order.push(f.request.id);
    }
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('an abort in service frees the server for the next waiting request at once', () => {
    const engine = new ExponentialServerEngine({
      modelName: 'm',
      servers: 1,
      meanServiceMs: 5,
      rng: rngStream(1, 's'),
    });
    engine.submit({ id: 'a', promptTokens: 1, outputTokens: 1 }, 0);
    engine.submit({ id: 'b', promptTokens: 1, outputTokens: 1 }, 0);
    engine.step(0);
    engine.abort('a', 0.001);
    expect(engine.nextStepAt()).toBe(0.001);
    engine.step(0.001);
    expect([engine.numRunning, engine.numWaiting]).toEqual([1, 0]);
    expect(engine.metrics().requestSuccess.abort).toBe(1);
  });
});
