import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { Simulator } from '../kernel/simulator.js';
import { VllmEngine } from './engine.js';
import { renderPrometheus } from './exposition.js';
import { lognormalStepJitter } from './jitter.js';
import type { EngineMetricsSnapshot } from './metrics.js';
import { DEPLOYMENT_PROFILES } from './profiles.js';
import { SimEngineHost } from './sim-host.js';
import { rooflineStepTime } from './step-time.js';

/** One engine under Poisson load with random lengths, aborts and step jitter; returns a trace. */
function run(seed: number, histograms = true, snapshot?: (m: EngineMetricsSnapshot) => void): string {
  const profile = DEPLOYMENT_PROFILES['llama-3.1-8b-a100-80g'];
  const sim = new Simulator();
  const engine = new VllmEngine({
    modelName: profile.modelName,
    limits: { ...profile.limits, numGpuBlocks: 600, maxModelLen: 8192 },
    stepTime: rooflineStepTime(profile.roofline),
    jitter: lognormalStepJitter(0.03, rngStream(seed, 'step-jitter')),
    histograms,
  });
  const trace: string[] = [];
  const host = new SimEngineHost(sim, engine, (o) => {
    if (o.finished.length > 0 || o.preempted.length > 0) {
      trace.push(`${sim.nowUs()} f=${o.finished.map((f) => f.request.id)} p=${o.preempted.map((r) => r.id)}`);
    }
  });
  const arrivals = rngStream(seed, 'arrivals');
  const lengths = rngStream(seed, 'lengths');
  const cancels = rngStream(seed, 'cancels');
  let n = 0;
  const arrive = (): void => {
    const id = `r${n}`;
    host.submit({ id, promptTokens: lengths.int(50, 1500), outputTokens: lengths.int(1, 400) });
    if (cancels.next() < 0.1) sim.after(cancels.exponential(1 / 500), () => host.abort(id));
    if (++n < 400) sim.after(arrivals.exponential(1 / 40), arrive);
  };
  sim.after(0, arrive);
  sim.run();
  snapshot?.(engine.metrics());
  return `${trace.join('\n')}\n${renderPrometheus(engine.metrics())}`;
}

describe('determinism', () => {
  it('the same seed gives a byte-identical trace and exposition; another seed does not', () => {
    const a = run(1);
    expect(run(1)).toBe(a);
    expect(run(2)).not.toBe(a);
  });

  it('the loaded run exercised preemption, aborts and completions', () => {
    const text = run(1);
    expect(text).toMatch(/p=r\d+/);
    expect(text).toMatch(/vllm:request_success_total\{[^}]*finished_reason="abort"\} [1-9]/);
    expect(text).toMatch(/vllm:num_preemptions_total\{[^}]*\} [1-9]/);
  });

  it('without histograms the engine runs the same and keeps its gauges and counters', () => {
    let full: EngineMetricsSnapshot | undefined;
    let lean: EngineMetricsSnapshot | undefined;
    const a = run(1, true, (m) => {
      full = m;
    });
    const b = run(1, false, (m) => {
      lean = m;
    });
    const traceOf = (t: string) => t.slice(0, t.indexOf('# HELP'));
    expect(traceOf(b)).toBe(traceOf(a));
    const counters = (m: EngineMetricsSnapshot) => ({
      running: m.numRequestsRunning,
      waiting: m.numRequestsWaiting,
      kv: m.kvCacheUsage,
      preemptions: m.numPreemptions,
      prompt: m.promptTokens,
      generation: m.generationTokens,
      success: m.requestSuccess,
      aborted: [m.abortedGeneratedTokens, m.abortedComputedTokens],
      steps: m.engineSteps,
    });
    expect(counters(lean!)).toEqual(counters(full!));
    expect(full!.timeToFirstTokenSeconds.count).toBeGreaterThan(0);
    expect(lean!.timeToFirstTokenSeconds.count).toBe(0);
    expect(lean!.interTokenLatencySeconds.count).toBe(0);
    expect(lean!.e2eRequestLatencySeconds.count).toBe(0);
  });
});
