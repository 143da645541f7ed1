/**
 * A scenario's `gate.fallback_pools` in the run: each pool's simulated engines (engines.ts, on
 * the run's clock and seed, with pool indexes after the main pool's so their random streams are
 * their own), which of them can take a degraded request, and what became of the requests a
 * policy's pool degrade sent to each.
 *
 * As behind the proxy (proxy/handler.ts `policyRun`), a request degraded to a pool goes past every
 * gate straight to an endpoint of that pool: the pool has no admission bound of its own, and the
 * policy holds no seats for it (decide.ts). Its engines queue what they cannot run, as vLLM does.
 * Which pools are available is the proxy's rule (gate/policy/pool-availability.ts): at least one
 * usable endpoint, none during maintenance. An endpoint is usable while its engine is up: the
 * timeline's engine events with `pool` (endpoint_down, endpoint_up, flap, engine_slowdown, capacity_loss) act on
 * a pool's engines (sim/run/world.ts), and {@link FallbackPools.engineChanged} then recomputes
 * which pools are available. The requests are not fed to the main pool's circuit breaker, scrapes
 * or per-second rows (none of them is the main rule's).
 */
import type { PolicyPoolCarrier } from '../../gate/index.js';
import { availablePolicyPools } from '../../gate/index.js';
import type { StepOutcome } from '../engine/types.js';
import type { Simulator } from '../kernel/simulator.js';
import type { FallbackPool } from '../scenario/resolve-fallback-pools.js';
import { buildEngines, type EngineNode, type SimEngineRequest } from './engines.js';
import type { FallbackPoolFigures, Outcome } from './records.js';

interface PoolState {
  readonly nodes: EngineNode[];
  rr: number;
  readonly figures: FallbackPoolFigures;
}

/** The run's fallback pools. */
export class FallbackPools {
  /** Every fallback engine, pool after pool. */
  readonly nodes: EngineNode[] = [];
  readonly #pools = new Map<string, PoolState>();
  /** Every fallback engine by its run-wide endpoint index. */
  readonly #byIndex = new Map<number, EngineNode>();
  /** The pools available outside maintenance; a new set at each change, never mutated. */
  #available: ReadonlySet<string>;
  readonly #none: ReadonlySet<string> = new Set<string>();

  /**
   * @param onStep receives every step outcome of a fallback engine (the run's lifecycle)
   * @param runAhead as for the main pool's engines
   */
  constructor(
    sim: Simulator,
    seed: number,
    pools: readonly FallbackPool[],
    onStep: (node: EngineNode, outcome: StepOutcome<SimEngineRequest>) => void,
    runAhead = true,
  ) {
    for (const p of pools) {
      const nodes = buildEngines(sim, seed, p.engines, p.endpoints, onStep, runAhead);
      this.nodes.push(...nodes);
      for (const n of nodes) this.#byIndex.set(n.endpoint.index, n);
      this.#pools.set(p.name, {
        nodes,
        rr: 0,
        figures: {
          engines: nodes.length,
          sent: 0,
          completed: 0,
          useful_on_time: 0,
          failed: 0,
          cancelled: 0,
          in_system_at_end: 0,
        },
      });
    }
    this.#available = this.#compute();
  }

  #compute(): ReadonlySet<string> {
    return availablePolicyPools(new Set(this.#pools.keys()), this.carriers(), false);
  }

  /** The fallback engine with run-wide endpoint index `index`, if any. */
  node(index: number): EngineNode | undefined {
    return this.#byIndex.get(index);
  }

  /**
   * A fallback engine went down or came back: recomputes the available pools (a new set when
   * they changed, the same one when not, so a holder of the old set can tell).
   */
  engineChanged(): void {
    const next = this.#compute();
    const same = next.size === this.#available.size && [...next].every((p) => this.#available.has(p));
    if (!same) this.#available = next;
  }

  /** Each pool as the availability rule sees it: its name and its engines up now. */
  carriers(): PolicyPoolCarrier[] {
    return [...this.#pools].map(([name, p]) => ({ name, usable: p.nodes.filter((n) => n.up).length }));
  }

  /**
   * The pools that can take a degraded request now (`availablePools` of the policy's
   * conditions): the same set object until an engine change alters it.
   */
  available(maintenance: boolean): ReadonlySet<string> {
    return maintenance ? this.#none : this.#available;
  }

  /**
   * The engine a request degraded to `pool` runs on: round-robin over the pool's engines that are
   * up, null when none is (or the pool is unknown). Counts the request as sent to the pool.
   */
  pick(pool: string): EngineNode | null {
    const p = this.#pools.get(pool);
    if (p === undefined) return null;
    p.figures.sent++;
    const n = p.nodes.length;
    for (let i = 0; i < n; i++) {
      const node = p.nodes[(p.rr + i) % n]!;
      if (node.up) {
        p.rr = (p.rr + i + 1) % n;
        return node;
      }
    }
    return null;
  }

  /** A request sent to `pool` ended with `outcome`; `useful` when completed on time with its client there. */
  ended(pool: string, outcome: Outcome, useful: boolean): void {
    const f = this.#pools.get(pool)?.figures;
    if (f === undefined) return;
    if (outcome === 'completed') {
      f.completed++;
      if (useful) f.useful_on_time++;
    } else if (outcome === 'cancelled') f.cancelled++;
    else f.failed++;
  }

  /** The figures of every pool, by name in declaration order. */
  figures(): Record<string, FallbackPoolFigures> {
    return Object.fromEntries(
      [...this.#pools].map(([name, { figures: f }]) => [
        name,
        { ...f, in_system_at_end: f.sent - f.completed - f.failed - f.cancelled },
      ]),
    );
  }
}
