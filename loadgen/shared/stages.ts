/**
 * Stages for k6's `ramping-arrival-rate` executor derived from an arrival schedule. The schedule's
 * send times are counted per window of `windowMs`; with `timeUnit` one window, each count is an
 * integer target. k6 moves the rate linearly from one stage's target to the next, so the stages
 * join the windows' centres: half a window at the first count, one window per later count, half a
 * window at the last. The integral of that piecewise-linear rate is exactly the number of
 * scheduled requests; a burst (many requests at one instant) is spread over about a window.
 * Consecutive flat stages are merged. Pure.
 */

/** One k6 stage: reach `target` iterations per `timeUnit` over `duration`. */
export interface K6Stage {
  target: number;
  duration: string;
}

/** The rate part of a `ramping-arrival-rate` scenario. */
export interface ArrivalStages {
  startRate: number;
  timeUnit: string;
  stages: K6Stage[];
  /** Requests the stages offer in all (the schedule's count). */
  total: number;
  /** The highest target, per `timeUnit`. */
  peak: number;
}

/** A k6 duration string: whole seconds as `Ns`, else `Nms`. */
export function k6Duration(ms: number): string {
  const r = Math.round(ms);
  return r % 1000 === 0 ? `${r / 1000}s` : `${r}ms`;
}

/** Parses a k6 duration made by {@link k6Duration} (`Ns`, `Nms`) back to ms. */
export function parseK6Duration(d: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(d);
  if (m === null) throw new RangeError(`k6 duration: ${JSON.stringify(d)} is not like 500ms, 2s, 1m`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

/** Requests per window of `windowMs` over [0, endMs). */
export function windowCounts(timesMs: Iterable<number>, endMs: number, windowMs: number): number[] {
  if (!(windowMs > 0)) throw new RangeError(`window: ${windowMs} is not a positive number of ms`);
  const n = Math.max(1, Math.ceil(endMs / windowMs));
  const counts = new Array<number>(n).fill(0);
  for (const t of timesMs) {
    if (!(t >= 0 && t < endMs)) continue;
    const i = Math.min(n - 1, Math.floor(t / windowMs));
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts;
}

/** The ramping-arrival-rate stages offering `counts[i]` requests in window i (see the module doc). */
export function stagesFromCounts(counts: readonly number[], windowMs: number): ArrivalStages {
  const first = counts[0] ?? 0;
  const raw: { target: number; ms: number; flat: boolean }[] = [
    { target: first, ms: windowMs / 2, flat: true },
  ];
  for (let i = 1; i < counts.length; i++) {
    const c = counts[i] as number;
    raw.push({ target: c, ms: windowMs, flat: c === counts[i - 1] });
  }
  const last = counts[counts.length - 1] ?? 0;
  raw.push({ target: last, ms: windowMs / 2, flat: true });
  const merged: typeof raw = [];
  for (const s of raw) {
    const prev = merged[merged.length - 1];
    if (prev?.flat && s.flat && prev.target === s.target) prev.ms += s.ms;
    else merged.push({ ...s });
  }
  return {
    startRate: first,
    timeUnit: k6Duration(windowMs),
    stages: merged.map((s) => ({ target: s.target, duration: k6Duration(s.ms) })),
    total: counts.reduce((a, b) => a + b, 0),
    peak: counts.reduce((a, b) => Math.max(a, b), 0),
  };
}

/**
 * Requests k6 would start over the stages: the integral of the piecewise-linear rate (for checks;
 * equals `total` by construction).
 */
export function stagesIntegral(s: Pick<ArrivalStages, 'startRate' | 'timeUnit' | 'stages'>): number {
  const unit = parseK6Duration(s.timeUnit);
  let rate = s.startRate;
  let sum = 0;
  for (const st of s.stages) {
    sum += ((rate + st.target) / 2) * (parseK6Duration(st.duration) / unit);
    rate = st.target;
  }
  return sum;
}
