/**
 * The world around the gate in a run: metric scrapes (with failures, latency
 * and outages), health probes and the circuit breaker that take endpoints out
 * of service and back, and the scenario's timeline of events.
 */
import type { FailingDeferStore } from '../../gate/index.js';
import { endpointId } from '../../gate/index.js';
import { rngStream } from '../kernel/rng.js';
import type { Simulator } from '../kernel/simulator.js';
import type { Scenario } from '../scenario/resolve.js';
import type { Admission } from './admission.js';
import type { DependencyOutages } from './dependency-outages.js';
import type { EngineNode, SimEngineRequest } from './engines.js';
import type { FallbackPools } from './fallback-pools.js';
import type { PoolHealth } from './pool-health.js';

/**
 * Scrapes every engine's `vllm:num_requests_waiting` each `scrape_interval_s`
 * (staggered over the interval by endpoint), failing with the configured
 * probability, during outages and while the engine is down; a reading lands
 * `scrape_latency_ms` after it was taken.
 */
export function scheduleScrapes(
  sim: Simulator,
  seed: number,
  scenario: Scenario,
  nodes: readonly EngineNode[],
  admission: Admission,
): void {
  const t = scenario.telemetry;
  const intervalMs = t.scrape_interval_s * 1000;
  const rng = rngStream(seed, 'telemetry.scrape');
  for (const o of t.outages) {
    for (const i of o.endpoints) {
      const n = nodes[i];
      if (n === undefined) continue;
      sim.schedule(o.at_s * 1000, () => n.scrapeOutage++);
      sim.schedule((o.at_s + o.duration_s) * 1000, () => n.scrapeOutage--);
    }
  }
  nodes.forEach((node, i) => {
    const offset = (intervalMs * i) / Math.max(1, nodes.length);
    const scrape = (): void => {
      const failed = rng.next() < t.scrape_failure_probability || node.scrapeOutage > 0 || !node.up;
      if (!failed) {
        node.host.sync();
        const waiting = node.engine.numWaiting;
        const deliver = () => admission.reportEngine(node.endpoint.id, waiting);
        if (t.scrape_latency_ms > 0) sim.after(t.scrape_latency_ms, deliver);
        else deliver();
      }
      sim.after(intervalMs, scrape);
    };
    sim.schedule(offset, scrape);
  });
}

/**
 * Health probes and the circuit breaker. An endpoint is in service while its
 * probes pass (`unhealthy_threshold` failures take it out, `healthy_threshold`
 * passes bring it back) and its breaker is closed (`failure_threshold`
 * consecutive failed requests open it for `open_s`).
 * @returns the breaker's input: each request's result on an endpoint
 */
export function scheduleHealth(
  sim: Simulator,
  scenario: Scenario,
  nodes: readonly EngineNode[],
  admission: Admission,
): (node: EngineNode, ok: boolean) => void {
  const h = scenario.health;
  const cb = h.circuit_breaker;
  const state = nodes.map(() => ({
    probeOk: true,
    fails: 0,
    passes: 0,
    breakerOpen: false,
    consecutive: 0,
    inService: true,
  }));
  const sync = (i: number): void => {
    const s = state[i]!;
    const inService = s.probeOk && !s.breakerOpen;
    if (inService !== s.inService) {
      s.inService = inService;
      admission.setEndpointHealth(nodes[i]!.endpoint.id, inService);
    }
  };
  const periodMs = h.probe_interval_s * 1000;
  nodes.forEach((node, i) => {
    const probe = (): void => {
      const s = state[i]!;
      if (node.up) {
        s.passes++;
        s.fails = 0;
        if (!s.probeOk && s.passes >= h.healthy_threshold) s.probeOk = true;
      } else {
        s.fails++;
        s.passes = 0;
        if (s.probeOk && s.fails >= h.unhealthy_threshold) s.probeOk = false;
      }
      sync(i);
      sim.after(periodMs, probe);
    };
    sim.schedule((periodMs * i) / Math.max(1, nodes.length), probe);
  });
  return (node, ok) => {
    if (!cb.enabled) return;
    const i = node.endpoint.index;
    const s = state[i];
    if (s === undefined) return;
    if (ok) {
      s.consecutive = 0;
      return;
    }
    s.consecutive++;
    if (!s.breakerOpen && s.consecutive >= cb.failure_threshold) {
      s.breakerOpen = true;
      sync(i);
      sim.after(cb.open_s * 1000, () => {
        s.breakerOpen = false;
        s.consecutive = Math.max(0, cb.failure_threshold - cb.success_threshold);
        sync(i);
      });
    }
  };
}

/**
 * Schedules the scenario's timeline events. `tools` is the clients' tool phase, whose `slowdown`
 * (a multiplier of tool-call times, 1 = normal) `tool_slowdown` events turn. `health`, when
 * given, is told each engine that goes down or comes back and each maintenance switch;
 * `dependencies`, each `dependency_outage`'s start and end. An engine event with `pool` acts on
 * that pool's engines of `fallback` instead of `nodes` (by run-wide endpoint index): down, its
 * requests are `lost` as on the main pool, and `fallback` recomputes which pools are available;
 * `health` (the main pool's) is not told.
 */
export function scheduleTimeline(
  sim: Simulator,
  scenario: Scenario,
  nodes: readonly EngineNode[],
  admission: Admission,
  lost: (node: EngineNode, requests: readonly SimEngineRequest[]) => void,
  tools: { slowdown: number },
  deferStore?: FailingDeferStore,
  health?: PoolHealth,
  dependencies?: DependencyOutages,
  fallback?: FallbackPools,
): void {
  const down = (i: number): void => {
    const n = nodes[i];
    if (n === undefined || !n.up) return;
    n.up = false;
    lost(n, n.host.restart());
    health?.engineDown(i);
  };
  const up = (i: number): void => {
    const n = nodes[i];
    if (n === undefined || n.up) return;
    n.up = true;
    n.host.restart();
    health?.engineUp(i);
  };
  const poolDown = (i: number): void => {
    const n = fallback?.node(i);
    if (n === undefined || !n.up) return;
    n.up = false;
    lost(n, n.host.restart());
    fallback!.engineChanged();
  };
  const poolUp = (i: number): void => {
    const n = fallback?.node(i);
    if (n === undefined || n.up) return;
    n.up = true;
    n.host.restart();
    fallback!.engineChanged();
  };
  const mainNode = (i: number): EngineNode | undefined => nodes[i];
  const poolNode = (i: number): EngineNode | undefined => fallback?.node(i);
  for (const e of scenario.timeline) {
    const at = e.at_s * 1000;
    switch (e.event) {
      case 'replace':
        sim.schedule(at, () => {
          admission.apply(e.rule);
          health?.setMembers(ruleMembers(scenario, e.rule));
        });
        break;
      case 'maintenance':
        sim.schedule(at, () => {
          admission.setMaintenance(e.enabled);
          health?.setMaintenance(e.enabled);
        });
        break;
      case 'endpoint_down': {
        const d = e.pool === undefined ? down : poolDown;
        sim.schedule(at, () => e.endpoints.forEach(d));
        break;
      }
      case 'endpoint_up': {
        const u = e.pool === undefined ? up : poolUp;
        sim.schedule(at, () => e.endpoints.forEach(u));
        break;
      }
      case 'flap': {
        const [d, u] = e.pool === undefined ? [down, up] : [poolDown, poolUp];
        for (let k = 0; k < e.count; k++) {
          const start = at + k * e.period_s * 1000;
          sim.schedule(start, () => e.endpoints.forEach(d));
          sim.schedule(start + e.down_s * 1000, () => e.endpoints.forEach(u));
        }
        break;
      }
      case 'scrape_outage':
        sim.schedule(at, () => {
          for (const i of e.endpoints) if (nodes[i]) nodes[i].scrapeOutage++;
        });
        sim.schedule(at + e.duration_s * 1000, () => {
          for (const i of e.endpoints) if (nodes[i]) nodes[i].scrapeOutage--;
        });
        break;
      case 'engine_slowdown': {
        const on = e.pool === undefined ? mainNode : poolNode;
        sim.schedule(at, () => slow(on, e.endpoints, e.factor, false));
        if (e.duration_s !== undefined) {
          sim.schedule(at + e.duration_s * 1000, () => slow(on, e.endpoints, e.factor, true));
        }
        break;
      }
      case 'tool_slowdown':
        sim.schedule(at, () => {
          tools.slowdown *= e.factor;
        });
        if (e.duration_s !== undefined) {
          sim.schedule(at + e.duration_s * 1000, () => {
            tools.slowdown /= e.factor;
          });
        }
        break;
      case 'capacity_loss': {
        const [d, u] = e.pool === undefined ? [down, up] : [poolDown, poolUp];
        sim.schedule(at, () => e.endpoints.forEach(d));
        if (e.duration_s !== undefined) sim.schedule(at + e.duration_s * 1000, () => e.endpoints.forEach(u));
        break;
      }
      case 'defer_store_outage':
        // Resolved only with gate.policy, so there is a store to fail.
        sim.schedule(at, () => deferStore?.startOutage());
        sim.schedule(at + e.duration_s * 1000, () => deferStore?.endOutage());
        break;
      case 'dependency_outage':
        // Resolved only with gate.policy and a name some class depends on.
        sim.schedule(at, () => dependencies?.start(e.name, sim.now()));
        if (e.duration_s !== undefined)
          sim.schedule(at + e.duration_s * 1000, () => dependencies?.end(e.name, sim.now()));
        break;
      case 'workload_shift':
        break;
    }
  }
}

/** Multiplies (or, ending a slowdown, divides) the step times of the endpoints' engines (`node` of each index) by `factor` from now on. */
function slow(
  node: (index: number) => EngineNode | undefined,
  endpoints: readonly number[],
  factor: number,
  end: boolean,
): void {
  for (const i of endpoints) {
    const n = node(i);
    if (n === undefined) continue;
    n.host.retime();
    if (end) n.slowdown /= factor;
    else n.slowdown *= factor;
  }
}

/** Pool indexes of the engines `rule` lists (by endpoint id). */
function ruleMembers(
  scenario: Scenario,
  rule: { endpoints?: readonly { endpointIP: string; targetPort: number }[] },
): number[] {
  const byId = new Map(scenario.endpoints.map((e) => [e.id, e.index]));
  const out: number[] = [];
  for (const ep of rule.endpoints ?? []) {
    const i = byId.get(endpointId(ep));
    if (i !== undefined) out.push(i);
  }
  return out;
}
