/** The lease of admitted work inside a policy host: its grant (re-pointed by a swap) and its links. */
import type { Grant } from './decide.js';
import type { TenantAcc } from './host-score.js';
import type { LeaseVia, PolicyLease } from './host-types.js';
import type { DegradeOption } from './schema.js';
import type { Lane } from './seats.js';

/** A lease (the host hands it out as a {@link PolicyLease}). */
export class Lease<C> implements PolicyLease<C> {
  readonly ctx: C;
  grant: Grant | undefined;
  readonly className: string;
  readonly tenant: string;
  readonly seats: number;
  readonly lane: Lane | 'pool';
  readonly via: LeaseVia;
  readonly mode: DegradeOption | undefined;
  readonly maxOutputTokens: number | undefined;
  readonly deadlineMs: number;
  readonly admittedAtMs: number;
  readonly arrivedAtMs: number;
  readonly deferId: string | undefined;
  readonly idempotencyKey: string | undefined;
  released = false;
  /** Its class is not in the policy in force: seats held unclassed. */
  unclassed = false;
  /** Its tenant's counters (the completion is scored without a lookup). */
  slot: TenantAcc | undefined = undefined;
  /** The gate holding it, and its links in that gate's list of live leases. */
  owner: object | undefined = undefined;
  prev: Lease<C> | undefined = undefined;
  next: Lease<C> | undefined = undefined;

  constructor(
    ctx: C,
    grant: Grant | undefined,
    className: string,
    tenant: string,
    via: LeaseVia,
    mode: DegradeOption | undefined,
    maxOut: number | undefined,
    deadlineMs: number,
    admittedAtMs: number,
    arrivedAtMs: number,
    deferId: string | undefined,
    key: string | undefined,
  ) {
    this.ctx = ctx;
    this.grant = grant;
    this.className = className;
    this.tenant = tenant;
    this.seats = grant === undefined ? 0 : grant.seats;
    this.lane = grant === undefined ? 'pool' : grant.lane;
    this.via = via;
    this.mode = mode;
    this.maxOutputTokens = maxOut;
    this.deadlineMs = deadlineMs;
    this.admittedAtMs = admittedAtMs;
    this.arrivedAtMs = arrivedAtMs;
    this.deferId = deferId;
    this.idempotencyKey = key;
  }
}
