/**
 * A gate on a ManualClock with a recording host, for tests and benchmarks.
 */

import type {
  AdmissionRequest,
  Decision,
  GateHost,
  GrantOutcome,
  Permit,
  Pool,
  Ticket,
} from '../gate/index.js';
import {
  type DecisionReason,
  Gate,
  type GateOptions,
  ManualClock,
  REASON_INDEX,
  type Refusal,
} from '../gate/index.js';

export const KEY = '192.0.2.10:8080/tcp';
export const EP1 = '198.51.100.11:8000';
export const EP2 = '198.51.100.12:8000';

/** A rule in the spec's shape, with `fc` merged into serviceArguments. */
export function rule(
  fc: Record<string, unknown> = {},
  endpoints: { endpointIP: string; targetPort: number; weight?: number; role?: string }[] = [
    { endpointIP: '198.51.100.11', targetPort: 8000, weight: 1 },
    { endpointIP: '198.51.100.12', targetPort: 8000, weight: 1 },
  ],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    serviceArguments: {
      externalIP: '192.0.2.10',
      port: 8080,
      protocol: 'tcp',
      mode: 4,
      sse_mode: true,
      ...extra,
      ...fc,
    },
    endpoints,
  };
}

export interface Grant {
  ticket: Ticket;
  permit: Permit;
  atMs: number;
}
export interface Ending {
  ticket: Ticket;
  refusal: Refusal;
  atMs: number;
}

/** A gate, its clock, and what its host was told. */
export class Harness {
  readonly clock: ManualClock;
  readonly gate: Gate;
  readonly grants: Grant[] = [];
  readonly endings: Ending[] = [];
  /** What the host answers to the next grants (then 'taken'). */
  readonly answers: GrantOutcome[] = [];
  /** Runs inside the host's grant callback, before it answers (to act while a turn is being handed over). */
  onGrant: ((ticket: Ticket, permit: Permit) => void) | null = null;

  constructor(opts: Partial<Omit<GateOptions, 'clock' | 'host'>> = {}, startMs = 0) {
    this.clock = new ManualClock(startMs);
    const host: GateHost = {
      granted: (ticket, permit) => {
        this.onGrant?.(ticket, permit);
        const a = this.answers.shift() ?? 'taken';
        if (a === 'taken') this.grants.push({ ticket, permit, atMs: this.clock.now() });
        return a;
      },
      ended: (ticket, refusal) => {
        this.endings.push({ ticket, refusal, atMs: this.clock.now() });
      },
    };
    this.gate = new Gate({ ...opts, clock: this.clock, host });
  }

  get pool(): Pool {
    const p = this.gate.pool(KEY);
    if (!p) throw new Error('no pool');
    return p;
  }

  admit(req: AdmissionRequest = {}, context?: unknown): Decision {
    return this.gate.admit(KEY, req, context);
  }

  /** Admits and expects a permit. */
  permit(req: AdmissionRequest = {}, context?: unknown): Permit {
    const d = this.admit(req, context);
    if (d.kind !== 'admit')
      throw new Error(`expected admit, got ${d.kind}${d.kind === 'refuse' ? ` ${d.refusal.reason}` : ''}`);
    return d.permit;
  }

  /** Admits and expects to wait. */
  ticket(req: AdmissionRequest = {}, context?: unknown): Ticket {
    const d = this.admit(req, context);
    if (d.kind !== 'queued')
      throw new Error(`expected queued, got ${d.kind}${d.kind === 'refuse' ? ` ${d.refusal.reason}` : ''}`);
    return d.ticket;
  }

  /** Admits and expects a refusal. */
  refusal(req: AdmissionRequest = {}): Refusal {
    const d = this.admit(req);
    if (d.kind !== 'refuse') throw new Error(`expected refuse, got ${d.kind}`);
    return d.refusal;
  }

  /** Count of a decision reason on the pool. */
  count(reason: DecisionReason): number {
    return this.pool.decisions[REASON_INDEX[reason]]!;
  }
}
