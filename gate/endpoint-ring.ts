/**
 * The endpoint pick of a pool's admission path, kept incrementally: per role, a heap of the
 * endpoints a pick may choose, so that a pick costs O(log n) instead of a walk over every
 * endpoint, with exactly the choices and round-robin state of {@link pickEndpointAt}.
 *
 * Why it is the same: while every endpoint of a role with a positive weight has the same integer
 * weight `w` and no endpoint is inside its warm-up window, each endpoint's ceiling is the role's,
 * so the endpoints a pick may choose (healthy, weight > 0, below the ceiling) change only when an
 * endpoint's `inflight` crosses the ceiling or its health flips, which the endpoint reports here.
 * A smooth weighted round-robin pick adds `w` to each of those n endpoints' accumulators and
 * takes `n * w` off the first with the largest. Stored as `key = cw - offset`, with `offset`
 * growing by `w` per pick, the keys of the endpoints not chosen stay as they are, and the
 * largest accumulator is the largest key (ties to the first endpoint): the heap's top. The
 * arithmetic is on integers far below 2^53, so it is exact, as the walk's is. Anything else
 * (unequal or fractional weights, a warm-up in progress, an endpoint handed to another pool) is
 * the walk itself, over the accumulators materialised.
 */
import {
  type EndpointRole,
  type EndpointState,
  type EndpointWatcher,
  endpointCap,
  PICK_ALL_FULL,
  PICK_NONE_HEALTHY,
  pickEndpointAt,
} from './endpoints.js';

/** Keys and the offset stay below this magnitude in the fast path (2^53 is where integers stop being exact). */
const EXACT_BOUND = 2 ** 48;
/** Largest common weight the fast path takes (weights are 0..65535 in a rule). */
const MAX_FAST_WEIGHT = 2 ** 20;

/** The endpoints of one role of one pool, in the pool's order. */
export class RoleRing implements EndpointWatcher {
  readonly #eps: readonly EndpointState[];
  /** The weight every endpoint with a positive weight has (1 when none has one); 0 when they differ. */
  readonly #w: number;
  /** Healthy endpoints (weight 0 included). */
  #healthy = 0;
  /** At least the latest `warmStartMs` of any endpoint (ms). */
  #maxWarmStartMs = Number.NEGATIVE_INFINITY;
  /** False once another ring took an endpoint over: then every pick is the plain walk. */
  #live = true;
  /** True while the heap holds exactly the endpoints a pick under `#cap` may choose. */
  #active = false;
  #cap = 0;
  /** `w` times the fast picks since the heap was built. */
  #offset = 0;
  /** Per slot: `cw - #offset` while in the heap, else `cw`. */
  readonly #val: Float64Array;
  readonly #heap: Int32Array;
  /** Per slot: its place in the heap, -1 when out. */
  readonly #pos: Int32Array;
  #size = 0;

  /** @param eps the pool's endpoints of one role, in the pool's order (each taken over from any earlier ring) */
  constructor(eps: readonly EndpointState[]) {
    this.#eps = eps;
    const n = eps.length;
    this.#val = new Float64Array(n);
    this.#heap = new Int32Array(n);
    this.#pos = new Int32Array(n).fill(-1);
    let w = 1;
    let seen = false;
    for (const ep of eps) {
      if (!(ep.weight > 0)) continue;
      if (!seen) {
        w = ep.weight;
        seen = true;
      } else if (ep.weight !== w) w = 0;
    }
    this.#w = Number.isSafeInteger(w) && w <= MAX_FAST_WEIGHT ? w : 0;
    // An endpoint listed twice cannot have one slot: such a ring watches nothing and walks.
    if (new Set(eps).size !== n) {
      this.#live = false;
      return;
    }
    for (let i = 0; i < n; i++) {
      const ep = eps[i] as EndpointState;
      ep.watcher?.detach();
      this.#val[i] = ep.cw;
      ep.watch(this, i, 0);
      if (ep.healthy) this.#healthy++;
      if (ep.warmStartMs > this.#maxWarmStartMs) this.#maxWarmStartMs = ep.warmStartMs;
    }
  }

  /** {@link pickEndpointAt} over this ring's endpoints (same choice, same accumulators). */
  pickAt(
    baseCap: number,
    warmupMs: number,
    nowMs: number,
    preferred: string | undefined,
  ): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
    const eps = this.#eps;
    if (!this.#live)
      return pickEndpointAt(eps, eps[0]?.role ?? 'normal', baseCap, warmupMs, nowMs, preferred);
    const flat = baseCap === 0 || warmupMs <= 0;
    if (preferred !== undefined) {
      for (let i = 0; i < eps.length; i++) {
        const ep = eps[i] as EndpointState;
        if (ep.id === preferred && ep.healthy) {
          const cap = flat ? baseCap : endpointCap(ep, baseCap, warmupMs, nowMs);
          if (cap === 0 || ep.inflight < cap) return ep;
        }
      }
    }
    if (this.#w === 0 || (!flat && !this.#noneWarming(warmupMs, nowMs))) {
      this.#deactivate();
      return this.#walk(baseCap, warmupMs, nowMs, flat);
    }
    if (!this.#active || this.#cap !== baseCap || this.#offset > EXACT_BOUND) {
      this.#deactivate();
      if (!this.#activate(baseCap)) return this.#walk(baseCap, warmupMs, nowMs, flat);
    }
    const size = this.#size;
    if (size === 0) return this.#healthy > 0 ? PICK_ALL_FULL : PICK_NONE_HEALTHY;
    const w = this.#w;
    this.#offset += w;
    const top = this.#heap[0] as number;
    this.#val[top] = (this.#val[top] as number) - size * w;
    this.#siftDown(0);
    return eps[top] as EndpointState;
  }

  inflightChanged(slot: number, before: number, after: number): void {
    const cap = this.#cap;
    if (!this.#active || cap === 0) return;
    if (before < cap !== after < cap) this.#update(slot);
  }

  healthChanged(slot: number, healthy: boolean): void {
    this.#healthy += healthy ? 1 : -1;
    if (this.#active) this.#update(slot);
  }

  warmStartChanged(startMs: number): void {
    if (startMs > this.#maxWarmStartMs) this.#maxWarmStartMs = startMs;
  }

  cwOf(slot: number): number {
    const v = this.#val[slot] as number;
    return (this.#pos[slot] as number) >= 0 ? v + this.#offset : v;
  }

  setCw(slot: number, cw: number): void {
    this.#deactivate();
    this.#val[slot] = cw;
  }

  detach(): void {
    this.#deactivate();
    this.#live = false;
    const eps = this.#eps;
    for (let i = 0; i < eps.length; i++) (eps[i] as EndpointState).watch(null, -1, this.#val[i] as number);
  }

  /** True when no endpoint is inside its warm-up window at `nowMs`, so each has the role's ceiling. */
  #noneWarming(warmupMs: number, nowMs: number): boolean {
    // Subtraction rounds monotonically, so `nowMs - ws >= warmupMs` holds for every ws <= the max.
    if (nowMs - this.#maxWarmStartMs >= warmupMs) return true;
    let max = Number.NEGATIVE_INFINITY;
    for (const ep of this.#eps) if (ep.warmStartMs > max) max = ep.warmStartMs;
    this.#maxWarmStartMs = max;
    return nowMs - max >= warmupMs;
  }

  /** The walk of {@link pickEndpointAt} over the materialised accumulators (the ring inactive). */
  #walk(
    baseCap: number,
    warmupMs: number,
    nowMs: number,
    flat: boolean,
  ): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
    const eps = this.#eps;
    const val = this.#val;
    let anyHealthy = false;
    let total = 0;
    let best = -1;
    for (let i = 0; i < eps.length; i++) {
      const ep = eps[i] as EndpointState;
      if (!ep.healthy) continue;
      anyHealthy = true;
      if (ep.weight <= 0) continue;
      const cap = flat ? baseCap : endpointCap(ep, baseCap, warmupMs, nowMs);
      if (cap !== 0 && ep.inflight >= cap) continue;
      const v = (val[i] as number) + ep.weight;
      val[i] = v;
      total += ep.weight;
      if (best < 0 || v > (val[best] as number)) best = i;
    }
    if (best < 0) return anyHealthy ? PICK_ALL_FULL : PICK_NONE_HEALTHY;
    val[best] = (val[best] as number) - total;
    return eps[best] as EndpointState;
  }

  /** Builds the heap of the endpoints a pick under `cap` may choose; false (inactive) when a value is not a small integer. */
  #activate(cap: number): boolean {
    const eps = this.#eps;
    const val = this.#val;
    for (let i = 0; i < eps.length; i++) {
      const v = val[i] as number;
      if (!Number.isInteger(v) || Math.abs(v) > EXACT_BOUND) return false;
    }
    this.#cap = cap;
    this.#offset = 0;
    let size = 0;
    for (let i = 0; i < eps.length; i++) {
      if (this.#eligible(eps[i] as EndpointState)) {
        this.#heap[size] = i;
        this.#pos[i] = size;
        size++;
      }
    }
    this.#size = size;
    for (let k = (size >> 1) - 1; k >= 0; k--) this.#siftDown(k);
    this.#active = true;
    return true;
  }

  /** Materialises every accumulator and empties the heap. */
  #deactivate(): void {
    if (!this.#active) return;
    const offset = this.#offset;
    for (let k = 0; k < this.#size; k++) {
      const i = this.#heap[k] as number;
      this.#val[i] = (this.#val[i] as number) + offset;
      this.#pos[i] = -1;
    }
    this.#size = 0;
    this.#offset = 0;
    this.#active = false;
  }

  #eligible(ep: EndpointState): boolean {
    const cap = this.#cap;
    return ep.healthy && ep.weight > 0 && (cap === 0 || ep.inflight < cap);
  }

  /** Puts the endpoint at `slot` in or out of the heap as it may or may not be chosen now. */
  #update(slot: number): void {
    const inHeap = (this.#pos[slot] as number) >= 0;
    const eligible = this.#eligible(this.#eps[slot] as EndpointState);
    if (eligible === inHeap) return;
    if (eligible) {
      this.#val[slot] = (this.#val[slot] as number) - this.#offset;
      const k = this.#size++;
      this.#heap[k] = slot;
      this.#pos[slot] = k;
      this.#siftUp(k);
    } else {
      const k = this.#pos[slot] as number;
      this.#val[slot] = (this.#val[slot] as number) + this.#offset;
      this.#pos[slot] = -1;
      const last = this.#heap[--this.#size] as number;
      if (k < this.#size) {
        this.#heap[k] = last;
        this.#pos[last] = k;
        this.#siftDown(k);
        this.#siftUp(this.#pos[last] as number);
      }
    }
  }

  /** True when slot `a` goes before slot `b`: the larger key, the earlier endpoint on a tie. */
  #before(a: number, b: number): boolean {
    const va = this.#val[a] as number;
    const vb = this.#val[b] as number;
    return va > vb || (va === vb && a < b);
  }

  #siftUp(k: number): void {
    const heap = this.#heap;
    const x = heap[k] as number;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      const p = heap[parent] as number;
      if (!this.#before(x, p)) break;
      heap[k] = p;
      this.#pos[p] = k;
      k = parent;
    }
    heap[k] = x;
    this.#pos[x] = k;
  }

  #siftDown(k: number): void {
    const heap = this.#heap;
    const size = this.#size;
    const x = heap[k] as number;
    for (;;) {
      let c = 2 * k + 1;
      if (c >= size) break;
      const r = c + 1;
      if (r < size && this.#before(heap[r] as number, heap[c] as number)) c = r;
      const y = heap[c] as number;
      if (!this.#before(y, x)) break;
      heap[k] = y;
      this.#pos[y] = k;
      k = c;
    }
    heap[k] = x;
    this.#pos[x] = k;
  }
}

/** A pool's endpoint picks, one {@link RoleRing} per role. */
export class EndpointPicker {
  readonly #rings: Partial<Record<EndpointRole, RoleRing>> = {};

  /** @param eps the pool's endpoints, in its order (the order ties go by) */
  constructor(eps: readonly EndpointState[]) {
    const byRole = new Map<EndpointRole, EndpointState[]>();
    for (const ep of eps) {
      const list = byRole.get(ep.role);
      if (list === undefined) byRole.set(ep.role, [ep]);
      else list.push(ep);
    }
    for (const [role, list] of byRole) this.#rings[role] = new RoleRing(list);
  }

  /**
   * {@link pickEndpointAt} over the pool's endpoints: a healthy endpoint of `role` with room under
   * `baseCap` (warm-up included, `warmupMs` ms from each return, at `nowMs` ms), `preferred` first.
   */
  pickAt(
    role: EndpointRole,
    baseCap: number,
    warmupMs: number,
    nowMs: number,
    preferred: string | undefined,
  ): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
    const ring = this.#rings[role];
    return ring === undefined ? PICK_NONE_HEALTHY : ring.pickAt(baseCap, warmupMs, nowMs, preferred);
  }

  /** Any healthy endpoint of `role`, room ignored (the walk with ceiling 0). */
  pickIgnoringRoom(
    role: EndpointRole,
    preferred: string | undefined,
  ): EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
    return this.pickAt(role, 0, 0, 0, preferred);
  }
}
