/**
 * The backend legs running on each endpoint, so that an endpoint declared
 * dead (its circuit breaker opened) can have its silent legs cut: a leg
 * that received nothing from the endpoint for a quiet period gives its unit
 * back at once instead of waiting for its own time limit. Legs still
 * receiving bytes are left to finish.
 */

/** A running leg as the registry sees it. */
export interface LiveLeg {
  /** `IP:port` of its endpoint. */
  readonly endpointId: string;
  /** Grows with every head or chunk received from the endpoint. */
  readonly progress: number;
  /** Ends the leg as failed because its endpoint is down. */
  cut(): void;
}

export class LiveLegs {
  readonly #by = new Map<string, Set<LiveLeg>>();

  add(l: LiveLeg): void {
    let s = this.#by.get(l.endpointId);
    if (s === undefined) {
      s = new Set();
      this.#by.set(l.endpointId, s);
    }
    s.add(l);
  }

  delete(l: LiveLeg): void {
    const s = this.#by.get(l.endpointId);
    if (s === undefined) return;
    s.delete(l);
    if (s.size === 0) this.#by.delete(l.endpointId);
  }

  /** Running legs on `endpointId`. */
  count(endpointId: string): number {
    return this.#by.get(endpointId)?.size ?? 0;
  }

  /**
   * Cuts, after `quietMs`, every leg on `endpointId` that received nothing
   * in that time (legs started meanwhile are not looked at).
   */
  cutQuiet(endpointId: string, quietMs: number): void {
    const s = this.#by.get(endpointId);
    if (s === undefined) return;
    const seen = new Map<LiveLeg, number>();
    for (const l of s) seen.set(l, l.progress);
    const t = setTimeout(() => {
      const now = this.#by.get(endpointId);
      for (const [l, p] of seen) if (now?.has(l) && l.progress === p) l.cut();
    }, quietMs);
    t.unref();
  }
}
