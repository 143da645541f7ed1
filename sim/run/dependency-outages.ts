/**
 * The policy's dependencies in a run: which `depends_on` names are open now. Behind the proxy a
 * dependency is the rule of that name and it is open while none of the rule's endpoints has its
 * breaker closed (proxy/policy/conditions.ts); a scenario has no such rule, so the timeline's
 * `dependency_outage` events open and close it. Overlapping outages of one name nest: it closes
 * when the last one ends. An open dependency carries no retry time, as in the proxy (a breaker's
 * reopen is not a promise), so its rejects have no Retry-After. Each open period is tallied for
 * the summary.
 */

import type { DependencyFigures } from './records.js';

const NO_RETRY_TIME: { readonly retryAtMs?: number } = Object.freeze({});

/** The open dependencies, as the policy's conditions read them. */
export class DependencyOutages {
  /** Outages in force per name (nested windows count once each). */
  readonly #depth = new Map<string, number>();
  /** Open names, each with no retry time: the map the policy's conditions carry. */
  readonly #open = new Map<string, { readonly retryAtMs?: number }>();
  readonly #figures = new Map<string, DependencyFigures & { since: number }>();
  readonly #changed: () => void;

  /**
   * @param names the policy's dependency names (the only ones tallied)
   * @param changed called after each change of the open set (not on a nested start or end)
   */
  constructor(names: Iterable<string>, changed: () => void = () => {}) {
    for (const n of names) this.#figures.set(n, { opened: 0, open_ms: 0, since: 0 });
    this.#changed = changed;
  }

  /** The open dependencies now; the same map object throughout (read it, do not keep a copy). */
  get open(): ReadonlyMap<string, { readonly retryAtMs?: number }> {
    return this.#open;
  }

  /** Some dependency is open. */
  get anyOpen(): boolean {
    return this.#open.size > 0;
  }

  /** An outage of `name` starts at `nowMs`. */
  start(name: string, nowMs: number): void {
    const d = (this.#depth.get(name) ?? 0) + 1;
    this.#depth.set(name, d);
    if (d > 1) return;
    this.#open.set(name, NO_RETRY_TIME);
    const f = this.#figures.get(name);
    if (f !== undefined) {
      f.opened++;
      f.since = nowMs;
    }
    this.#changed();
  }

  /** An outage of `name` ends at `nowMs` (a no-op when none is in force). */
  end(name: string, nowMs: number): void {
    const d = this.#depth.get(name) ?? 0;
    if (d === 0) return;
    this.#depth.set(name, d - 1);
    if (d > 1) return;
    this.#open.delete(name);
    const f = this.#figures.get(name);
    if (f !== undefined) f.open_ms += nowMs - f.since;
    this.#changed();
  }

  /** Per dependency name: its outages and time open up to `nowMs`. */
  figures(nowMs: number): Record<string, DependencyFigures> {
    const out: Record<string, DependencyFigures> = {};
    for (const [n, f] of this.#figures)
      out[n] = { opened: f.opened, open_ms: f.open_ms + (this.#open.has(n) ? nowMs - f.since : 0) };
    return out;
  }
}
