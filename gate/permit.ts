/**
 * Permits: what an admitted request holds until it completes, its client goes
 * away, or its backend leg fails. Release is idempotent; a second release is
 * counted `unknown_permit` and moves nothing.
 */
import type { AdmissionHeaderValues, Refusal } from './decisions.js';
import type { EndpointRole, EndpointState } from './endpoints.js';
import type { TenantSlot } from './tenants.js';

/** The pool-side operations a permit calls back into. */
export interface PermitOwner {
  releasePermit(p: Permit): void;
  firstDataEvent(p: Permit): void;
  exposeHeaders(p: Permit): AdmissionHeaderValues | null;
  openLeg(p: Permit, role: 'prefill' | 'decode', preferred: string | undefined): Leg | Refusal;
  closeLeg(leg: Leg): void;
  moveLeg(leg: Leg, to: string): boolean;
  countUnknownPermit(): void;
}

/** A unit held by an admitted request. */
export class Permit {
  released = false;
  /** Open P/D legs (null when none were opened). */
  legs: Leg[] | null = null;
  /**
   * A P/D request under enforce is counted once: `admitted` when its decode leg opens or it
   * ends without a refused leg, or the reason its leg was refused. True until one of those.
   */
  admitCountPending = false;

  /**
   * @param owner the pool that issued it
   * @param tracked false for permits that took no unit (a pool that stopped gating)
   * @param endpoint the normal-role endpoint chosen (null for P/D requests)
   * @param slot the tenant slot it counts in
   * @param admittedAtMs admission time, the start of TTFT
   * @param context the host's value given at admission
   */
  constructor(
    readonly owner: PermitOwner,
    readonly tracked: boolean,
    public endpoint: EndpointState | null,
    readonly slot: TenantSlot | null,
    readonly admittedAtMs: number,
    readonly context: unknown,
  ) {}

  /** The `IP:port` the request goes to (normal role), or null for P/D requests and observe with no endpoint. */
  get endpointId(): string | null {
    return this.endpoint === null ? null : this.endpoint.id;
  }

  /** Releases the unit (and every leg). Idempotent: a repeat counts `unknown_permit` and changes nothing. */
  release(): void {
    if (this.released) {
      this.owner.countUnknownPermit();
      return;
    }
    this.owner.releasePermit(this);
  }

  /** The first data event of a streamed response was relayed: a TTFT sample from admission. */
  firstDataEvent(): void {
    if (!this.released) this.owner.firstDataEvent(this);
  }

  /** Admission header values for the response head, or null when the pool does not expose them. */
  exposeHeaders(): AdmissionHeaderValues | null {
    return this.owner.exposeHeaders(this);
  }

  /** Opens a prefill or decode leg on an endpoint of that role. Legs never wait: a refusal ends the request. */
  openLeg(role: 'prefill' | 'decode', preferred?: string): Leg | Refusal {
    return this.owner.openLeg(this, role, preferred);
  }
}

/** A P/D role leg: one unit on an endpoint of its role, under its request's service unit. */
export class Leg {
  closed = false;
  constructor(
    readonly permit: Permit,
    readonly role: EndpointRole,
    public endpoint: EndpointState,
  ) {}

  get endpointId(): string {
    return this.endpoint.id;
  }

  /** Gives the leg's endpoint unit back; the request keeps its service unit. Idempotent. */
  close(): void {
    if (!this.closed) this.permit.owner.closeLeg(this);
  }

  /**
   * Moves the leg to endpoint `to`: takes the new endpoint's unit first; if it
   * has no room the move is refused and the old unit kept.
   * @returns true when moved
   */
  move(to: string): boolean {
    return !this.closed && this.permit.owner.moveLeg(this, to);
  }
}
