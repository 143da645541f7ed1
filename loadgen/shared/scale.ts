/**
 * Time scaling of a client setup (`--duration-scale X`): every time in the arrival processes, shifts
 * and trace start is multiplied by X while rates stay as they are, so a scaled run has the shape
 * of the scenario (a ramp still ramps from A to B, a spike still comes a third of the way in) at
 * the same intensity, over X times the length. Deadlines, SLOs, token counts and recorded trace
 * times are not scaled (a trace is cut at the scaled end). Pure.
 */
import type { ArrivalConfig } from '../../sim/clients/arrivals.js';
import type { LoadSetup } from '../../sim/clients/schedule.js';

/** `setup` with its times scaled by `x` (> 0). */
export function scaleSetup<S extends LoadSetup>(setup: S, x: number): S {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeError(`duration scale: ${x} is not a positive number`);
  if (x === 1) return setup;
  const w = setup.workload;
  const out: S = {
    ...setup,
    workload: {
      ...w,
      ...(w.arrival ? { arrival: scaleArrival(w.arrival, x) } : {}),
      ...(w.tenants
        ? { tenants: w.tenants.map((t) => (t.arrival ? { ...t, arrival: scaleArrival(t.arrival, x) } : t)) }
        : {}),
    },
    shifts: setup.shifts.map((s) => ({
      ...s,
      atMs: s.atMs * x,
      ...(s.arrival ? { arrival: scaleArrival(s.arrival, x) } : {}),
    })),
  };
  if (setup.trace) out.trace = { ...setup.trace, startMs: setup.trace.startMs * x };
  return out;
}

const opt = (v: number | undefined, x: number): number | undefined => (v === undefined ? undefined : v * x);

/** Drops keys whose value is undefined. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** An arrival process with its times scaled by `x` and its rates kept. */
export function scaleArrival(a: ArrivalConfig, x: number): ArrivalConfig {
  const startMs = opt(a.startMs, x);
  switch (a.kind) {
    case 'constant':
    case 'poisson':
      return compact({ ...a, startMs, durationMs: opt(a.durationMs, x) });
    case 'ramp':
      return compact({ ...a, startMs, durationMs: a.durationMs * x });
    case 'step':
      return compact({ ...a, startMs, steps: a.steps.map((s) => ({ ...s, durationMs: s.durationMs * x })) });
    case 'spike':
      return compact({
        ...a,
        startMs,
        durationMs: a.durationMs * x,
        spikeAtMs: a.spikeAtMs * x,
        spikeDurationMs: opt(a.spikeDurationMs, x),
      });
    case 'diurnal':
      return compact({
        ...a,
        startMs,
        durationMs: a.durationMs * x,
        periodMs: a.periodMs * x,
        phaseMs: opt(a.phaseMs, x),
      });
    case 'trace':
      return compact({ ...a, startMs });
  }
}
