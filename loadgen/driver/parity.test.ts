/**
 * Parity by construction: the load driver sends, for a scenario and seed, the logical requests
 * the simulator sends in its run of them, in the same order and with the same tenant, tokens,
 * shape, deadline and SLO, because both take them from one schedule (`sim/clients/schedule.ts`).
 */
import { describe, expect, it } from 'vitest';
import type { RequestDescriptor } from '../../sim/clients/request-factory.js';
import { collectSchedule } from '../../sim/clients/schedule.js';
import { roundToUs } from '../../sim/kernel/clock.js';
import { runScenario } from '../../sim/run/run.js';
import { MemorySink } from '../../sim/run/sinks.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { loadSchedule } from './driver.js';
import { prepareLoad } from './scenario.js';

/**
 * A descriptor as the simulator's clock shows it. The simulator numbers a retry from the same
 * counter as new requests, so attempt ids are the run's business (the logical id is compared);
 * its clock has 1 µs resolution, so send times are compared at it, deadlines relative to them.
 */
function onSimClock(d: RequestDescriptor): Omit<RequestDescriptor, 'id'> {
  const { id: _id, ...rest } = d;
  return {
    ...rest,
    sentAtMs: roundToUs(d.sentAtMs),
    firstSentAtMs: roundToUs(d.firstSentAtMs),
    deadlineMs: d.deadlineMs === undefined ? undefined : Math.round(d.deadlineMs - d.firstSentAtMs),
  };
}

/** The logical requests (first attempts) the simulator sends in its run of `path` under `seed`. */
async function simulated(path: string, seed: number): Promise<RequestDescriptor[]> {
  const sent: RequestDescriptor[] = [];
  await runScenario(await loadScenario(path), {
    seed,
    sink: new MemorySink(false),
    observer: { decided: (d) => void (d.attempt === 1 && sent.push(d)) },
  });
  return sent;
}

describe('the load driver and the simulator', () => {
  it.each([
    ['scenarios/noisy-tenant.yaml', 3, 'tenants with their own arrivals, retries'],
    ['scenarios/long-context-shift.yaml', 11, 'a token shift'],
    ['scenarios/stale-scrapes-frozen.yaml', 5, 'an arrival shift'],
    ['scenarios/http2-mix.yaml', 7, 'HTTP/2 and non-inference shares'],
    ['scenarios/azure-conv-replay.yaml', 2, 'a replayed trace'],
  ])('send the same requests for %s under seed %i (%s)', async (path, seed) => {
    const prepared = await prepareLoad(await loadScenario(path), { seed });
    const driver = collectSchedule(loadSchedule(prepared));
    const sim = await simulated(path, seed);
    expect(driver.length).toBeGreaterThan(100);
    expect(driver.map(onSimClock)).toEqual(sim.map(onSimClock));
  });
});
