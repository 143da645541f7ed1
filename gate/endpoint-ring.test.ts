/**
 * The incremental endpoint pick (endpoint-ring.ts) against the walk it replaces, kept here as the
 * reference: over random sequences of picks (with and without a ceiling, a preferred endpoint,
 * room ignored, the queue's per-endpoint ceiling callback), inflight changes, health flips,
 * warm-ups, clock advances, and reads and writes of the accumulators, the two give the same
 * endpoint (or the same none-healthy / all-full answer) every time, and every endpoint the same
 * accumulator after every step.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EndpointPicker } from './endpoint-ring.js';
import {
  type EndpointRole,
  EndpointState,
  PICK_ALL_FULL,
  PICK_NONE_HEALTHY,
  pickEndpointAt,
} from './endpoints.js';

const SEED = 20261202;
const RUNS = 200;

/** The reference's endpoint: plain fields. */
interface RefEp {
  id: string;
  role: EndpointRole;
  weight: number;
  healthy: boolean;
  inflight: number;
  warmStartMs: number;
  cw: number;
}

/** endpointCap as of commit 67d2674. */
function refCap(ep: RefEp, baseCap: number, warmupMs: number, nowMs: number): number {
  if (baseCap === 0 || warmupMs <= 0) return baseCap;
  const elapsed = nowMs - ep.warmStartMs;
  if (elapsed >= warmupMs || elapsed < 0) return baseCap;
  const floor = Math.max(1, Math.floor(baseCap / 4));
  return floor + Math.floor(((baseCap - floor) * elapsed) / warmupMs);
}

/** pickEndpoint as of commit 67d2674 (the walk). */
function refPick(
  eps: readonly RefEp[],
  role: EndpointRole,
  capOf: (ep: RefEp) => number,
  preferred: string | undefined,
  ignoreRoom: boolean,
): RefEp | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL {
  let anyHealthy = false;
  let total = 0;
  let best: RefEp | null = null;
  if (preferred !== undefined) {
    for (const ep of eps) {
      if (ep.id === preferred && ep.role === role && ep.healthy) {
        const cap = capOf(ep);
        if (ignoreRoom || cap === 0 || ep.inflight < cap) return ep;
      }
    }
  }
  for (const ep of eps) {
    if (ep.role !== role || !ep.healthy) continue;
    anyHealthy = true;
    if (ep.weight <= 0) continue;
    const cap = capOf(ep);
    if (!ignoreRoom && cap !== 0 && ep.inflight >= cap) continue;
    ep.cw += ep.weight;
    total += ep.weight;
    if (best === null || ep.cw > best.cw) best = ep;
  }
  if (best === null) return anyHealthy ? PICK_ALL_FULL : PICK_NONE_HEALTHY;
  best.cw -= total;
  return best;
}

type Op =
  | { op: 'pickAt'; role: EndpointRole; cap: number; warmupMs: number; preferred: number }
  | { op: 'ignoreRoom'; role: EndpointRole; preferred: number }
  | { op: 'queueTracked'; cap: number; warmupMs: number; preferred: number }
  | { op: 'plainWalk'; role: EndpointRole; cap: number; warmupMs: number }
  | { op: 'inflight'; ep: number; delta: number }
  | { op: 'health'; ep: number }
  | { op: 'warm'; ep: number; clear: boolean }
  | { op: 'advance'; ms: number }
  | { op: 'readCw'; ep: number }
  | { op: 'writeCw'; ep: number; cw: number };

const N = 9;
const roleArb = fc.constantFrom<EndpointRole>('normal', 'normal', 'normal', 'prefill', 'decode');
/** -1: the run's own ceiling (so the heap lives across picks); else that ceiling. */
const capArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant(-1) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 2, 3, 8) },
);
/** -1: the run's own warm-up window. */
const warmArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant(-1) },
  { weight: 1, arbitrary: fc.constantFrom(0, 100, 1000) },
);
/** -1 for none; indexes past N name an endpoint that does not exist. */
const prefArb = fc.integer({ min: -6, max: N });
const epArb = fc.integer({ min: 0, max: N - 1 });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      op: fc.constant('pickAt' as const),
      role: roleArb,
      cap: capArb,
      warmupMs: warmArb,
      preferred: prefArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('ignoreRoom' as const), role: roleArb, preferred: prefArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('queueTracked' as const),
      cap: capArb,
      warmupMs: warmArb,
      preferred: prefArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('plainWalk' as const),
      role: roleArb,
      cap: capArb,
      warmupMs: warmArb,
    }),
  },
  {
    weight: 16,
    arbitrary: fc.record({
      op: fc.constant('inflight' as const),
      ep: epArb,
      delta: fc.constantFrom(1, 1, -1, -1, -1, 2, -2),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('health' as const), ep: epArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('warm' as const), ep: epArb, clear: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(1, 10, 50, 400) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('readCw' as const), ep: epArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('writeCw' as const),
      ep: epArb,
      cw: fc.constantFrom(0, 3, -7, 0.5),
    }),
  },
);

/** Weights: mostly one common weight (the fast path), sometimes some zero, sometimes unequal or fractional. */
const poolArb = fc.record({
  roles: fc.array(roleArb, { minLength: N, maxLength: N }),
  weights: fc.oneof(
    fc.constantFrom(1, 3).map((w) => Array.from({ length: N }, () => w)),
    fc.array(fc.constantFrom(0, 2, 2, 2), { minLength: N, maxLength: N }),
    fc.array(fc.constantFrom(0, 1, 2, 5, 0.5), { minLength: N, maxLength: N }),
  ),
  /** A repeated id: the preferred walk returns the first of them with room. */
  dupId: fc.boolean(),
  cap: fc.constantFrom(0, 1, 2, 3, 5),
  warmupMs: fc.constantFrom(0, 0, 100),
});

type PoolShape = typeof poolArb extends fc.Arbitrary<infer T> ? T : never;

function run(pool: PoolShape, ops: readonly Op[]): void {
  const idOf = (i: number): string => (pool.dupId && i === 1 ? 'ep0' : `ep${i}`);
  const ref: RefEp[] = [];
  const eps: EndpointState[] = [];
  for (let i = 0; i < N; i++) {
    const role = pool.roles[i] as EndpointRole;
    const weight = pool.weights[i] as number;
    ref.push({
      id: idOf(i),
      role,
      weight,
      healthy: true,
      inflight: 0,
      warmStartMs: Number.NEGATIVE_INFINITY,
      cw: 0,
    });
    eps.push(new EndpointState(idOf(i), role, weight));
  }
  const picker = new EndpointPicker(eps);
  let now = 1000;
  const capOf = (c: number): number => (c < 0 ? pool.cap : c);
  const warmOf = (w: number): number => (w < 0 ? pool.warmupMs : w);
  const preferredOf = (k: number): string | undefined => (k < 0 ? undefined : `ep${k}`);
  const same = (
    a: RefEp | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL,
    b: EndpointState | typeof PICK_NONE_HEALTHY | typeof PICK_ALL_FULL,
  ): void => {
    const want = typeof a === 'object' ? ref.indexOf(a) : a;
    const got = typeof b === 'object' ? eps.indexOf(b) : b;
    if (typeof a !== typeof b || want !== got) expect([typeof b, got]).toEqual([typeof a, want]);
  };
  for (const o of ops) {
    switch (o.op) {
      case 'pickAt': {
        const p = preferredOf(o.preferred);
        const [c, w] = [capOf(o.cap), warmOf(o.warmupMs)];
        const a = refPick(ref, o.role, (e) => refCap(e, c, w, now), p, false);
        same(a, picker.pickAt(o.role, c, w, now, p));
        break;
      }
      case 'ignoreRoom': {
        const p = preferredOf(o.preferred);
        same(
          refPick(ref, o.role, () => 0, p, true),
          picker.pickIgnoringRoom(o.role, p),
        );
        break;
      }
      case 'queueTracked': {
        // The queue's grant: a callback of each endpoint's own ceiling, normal endpoints only.
        const p = preferredOf(o.preferred);
        const [c, w] = [capOf(o.cap), warmOf(o.warmupMs)];
        const a = refPick(ref, 'normal', (e) => refCap(e, c, w, now), p, false);
        same(a, picker.pickAt('normal', c, w, now, p));
        break;
      }
      case 'plainWalk': {
        // The walk itself over watched endpoints (reading and writing cw through the watcher).
        const [c, w] = [capOf(o.cap), warmOf(o.warmupMs)];
        const a = refPick(ref, o.role, (e) => refCap(e, c, w, now), undefined, false);
        same(a, pickEndpointAt(eps, o.role, c, w, now, undefined));
        const b = refPick(ref, o.role, () => 0, undefined, true);
        same(b, pickEndpointAt(eps, o.role, 0, 0, now, undefined));
        break;
      }
      case 'inflight': {
        const v = Math.max(0, (ref[o.ep] as RefEp).inflight + o.delta);
        (ref[o.ep] as RefEp).inflight = v;
        (eps[o.ep] as EndpointState).inflight = v;
        break;
      }
      case 'health': {
        const h = !(ref[o.ep] as RefEp).healthy;
        (ref[o.ep] as RefEp).healthy = h;
        (eps[o.ep] as EndpointState).healthy = h;
        break;
      }
      case 'warm': {
        const v = o.clear ? Number.NEGATIVE_INFINITY : now;
        (ref[o.ep] as RefEp).warmStartMs = v;
        (eps[o.ep] as EndpointState).warmStartMs = v;
        break;
      }
      case 'advance':
        now += o.ms;
        break;
      case 'readCw':
        expect((eps[o.ep] as EndpointState).cw).toBe((ref[o.ep] as RefEp).cw);
        break;
      case 'writeCw':
        (ref[o.ep] as RefEp).cw = o.cw;
        (eps[o.ep] as EndpointState).cw = o.cw;
        break;
    }
    for (let i = 0; i < N; i++) {
      const [e, r] = [eps[i] as EndpointState, ref[i] as RefEp];
      // One expect only on a difference: an expect per endpoint per step is most of the test's time.
      if (!Object.is(e.cw, r.cw) || e.inflight !== r.inflight)
        expect([i, e.cw, e.inflight]).toEqual([i, r.cw, r.inflight]);
    }
  }
}

describe('EndpointPicker', () => {
  it('chooses as the smooth weighted round-robin walk does, leaving the same accumulators', () => {
    fc.assert(
      fc.property(poolArb, fc.array(opArb, { minLength: 1, maxLength: 300, size: 'max' }), (pool, ops) =>
        run(pool, ops),
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('takes the fast path over a long run of equal weights and still matches the walk', () => {
    // 112 endpoints, one weight, a ceiling of 3, admissions and releases interleaved: the heap
    // path throughout (no warm-up), checked against the walk on every pick.
    const n = 112;
    const ref: RefEp[] = [];
    const eps: EndpointState[] = [];
    for (let i = 0; i < n; i++) {
      ref.push({
        id: `e${i}`,
        role: 'normal',
        weight: 1,
        healthy: true,
        inflight: 0,
        warmStartMs: Number.NEGATIVE_INFINITY,
        cw: 0,
      });
      eps.push(new EndpointState(`e${i}`, 'normal', 1));
    }
    const picker = new EndpointPicker(eps);
    let x = 12345;
    const held: number[] = [];
    let fullAnswers = 0;
    for (let step = 0; step < 20000; step++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      if (x % 3 !== 0 || held.length === 0) {
        const a = refPick(ref, 'normal', () => 3, undefined, false);
        const b = picker.pickAt('normal', 3, 0, 0, undefined);
        if (typeof a !== 'object') {
          expect(b).toBe(a);
          fullAnswers++;
          continue;
        }
        const i = ref.indexOf(a);
        expect(typeof b === 'object' ? eps.indexOf(b) : b).toBe(i);
        (ref[i] as RefEp).inflight++;
        (eps[i] as EndpointState).inflight++;
        held.push(i);
      } else {
        const i = held.splice(x % held.length, 1)[0] as number;
        (ref[i] as RefEp).inflight--;
        (eps[i] as EndpointState).inflight--;
      }
    }
    expect(fullAnswers).toBeGreaterThan(0);
    for (let i = 0; i < n; i++) expect((eps[i] as EndpointState).cw).toBe((ref[i] as RefEp).cw);
  });
});
