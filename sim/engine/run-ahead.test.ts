/**
 * Planning uneventful steps ahead changes nothing a host can see: a randomized world of four
 * engines, stepped one event per step and with run-ahead, must log the same outcomes, reads
 * and submit results. Step times and arrivals fall on whole milliseconds, so planned step
 * ends coincide all the time with arrivals, reads, aborts, slowdowns and other engines'
 * steps (which submit to their neighbour when a request finishes): every tie of the
 * simulator's order is exercised. A small KV pool makes preemption common too.
 */
import { describe, expect, it } from 'vitest';
import { rngStream } from '../kernel/rng.js';
import { Simulator } from '../kernel/simulator.js';
import { VllmEngine } from './engine.js';
import { lognormalStepJitter } from './jitter.js';
import type { EngineLimits } from './profiles.js';
import { SimEngineHost } from './sim-host.js';
import type { EngineRequest } from './types.js';

const LIMITS: EngineLimits = {
  maxNumSeqs: 8,
  maxNumBatchedTokens: 48,
  blockSize: 4,
  numGpuBlocks: 40,
  maxModelLen: 160,
  longPrefillTokenThreshold: 0,
  gpuMemoryUtilization: 0.9,
};

function world(runAhead: boolean, seed: number, jitterSigma = 0): { log: string[]; inline: number } {
  const sim = new Simulator();
  const rng = rngStream(seed, 'run-ahead');
  const int = (lo: number, hi: number): number => lo + Math.floor(rng.next() * (hi - lo + 1));
  const log: string[] = [];
  const hosts: SimEngineHost<EngineRequest>[] = [];
  const engines: VllmEngine<EngineRequest>[] = [];
  let nextId = 0;
  let slow = 1;
  const submit = (k: number): void => {
    const id = String(nextId++);
    const r = hosts[k]!.submit({ id, promptTokens: int(1, 40), outputTokens: int(1, 40) });
    log.push(`submit ${id}->${k}@${sim.nowUs()} ${r.accepted}`);
  };
  for (let k = 0; k < 4; k++) {
    const engine = new VllmEngine<EngineRequest>({
      modelName: 't',
      engineIndex: String(k),
      limits: LIMITS,
      stepTime: (b) => slow * (1 + (b.contextTokens % 3)),
      reportTokens: false,
      histograms: false,
      reuseOutcome: true,
      ...(runAhead ? { runAhead: true } : {}),
      ...(jitterSigma > 0
        ? { jitter: lognormalStepJitter(jitterSigma, rngStream(seed, `jitter.${k}`)) }
        : {}),
    });
    engines.push(engine);
    hosts.push(
      new SimEngineHost(sim, engine, (out) => {
        const ids = (rs: readonly EngineRequest[]): string => rs.map((r) => r.id).join(',');
        const fin = out.finished.map((f) => `${f.request.id}:${f.emittedTokens}`).join(',');
        // A planned step has nothing to report; the other steps must come at the same instants.
        if (out.firstTokens.length + out.finished.length + out.preempted.length === 0) return;
        log.push(
          `step ${k}@${sim.nowUs()} first=${ids(out.firstTokens)} fin=${fin} pre=${ids(out.preempted)}`,
        );
        if (out.finished.length > 0 && rng.next() < 0.8) submit((k + 1) % 4);
      }),
    );
  }
  for (let t = 0; t < 3000; t += int(0, 4)) sim.schedule(t, () => submit(int(0, 3)));
  sim.every(7, () => {
    hosts.forEach((h, k) => {
      h.sync();
      const e = engines[k]!;
      log.push(`read ${sim.nowUs()} ${e.kvCacheUsage} ${e.numRunning} ${e.numWaiting}`);
    });
  });
  sim.every(11, () => {
    const id = String(int(0, nextId));
    hosts.forEach((h, k) => {
      h.sync();
      const p = engines[k]!.progress(id);
      const tokens = p?.emittedTokens;
      if (h.abort(id) !== undefined) log.push(`abort ${id}@${sim.nowUs()} ${tokens}`);
    });
  });
  sim.every(250, () => {
    for (const h of hosts) h.retime();
    slow = slow === 1 ? 2 : 1;
  });
  const before = { n: 0 };
  const count = sim.countInline.bind(sim);
  sim.countInline = (n: number) => {
    before.n += n;
    count(n);
  };
  sim.run(3500);
  for (const h of hosts) {
    h.settle();
    log.push(JSON.stringify(h.engine.metrics()));
  }
  log.push(`events ${sim.eventCount}`);
  return { log, inline: before.n };
}

describe('VllmEngine run-ahead', () => {
  it.each([1, 2, 3])('logs exactly what stepping one event at a time logs (seed %i)', (seed) => {
    const stepped = world(false, seed);
    const ahead = world(true, seed);
    expect(stepped.log.length).toBeGreaterThan(2000);
    expect(stepped.inline).toBe(0);
    expect(ahead.inline).toBeGreaterThan(1000);
    expect(ahead.log).toEqual(stepped.log);
  });

  it.each([1, 2])(
    'with seeded step jitter, logs exactly what stepping one event at a time logs (seed %i)',
    (seed) => {
      const stepped = world(false, seed, 0.2);
      const ahead = world(true, seed, 0.2);
      expect(ahead.inline).toBeGreaterThan(1000);
      expect(ahead.log).toEqual(stepped.log);
      // The jitter changes the run: not the log of the unjittered world.
      expect(stepped.log).not.toEqual(world(false, seed).log);
    },
  );
});
