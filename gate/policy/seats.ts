/**
 * Seat accounting of a policy: per class, the seats in use; a shared count of reserve and emergency
 * seats. One invariant keeps every lender's floor reachable: seats in use plus the unused part of
 * every class's floor never exceed the seats outside the reserve. A class above its guaranteed
 * seats is borrowing: only while allowed, healthy and within its borrowing limit (the principle of
 * Kubernetes APF's lendable and borrowing limits, without its configuration).
 */
import type { Policy, PolicyClass } from './compile.js';

/** Where a grant's seats come from. */
export type Lane = 'class' | 'reserve' | 'emergency';

/** Seats held by one admitted request until it is released. */
export interface SeatGrant {
  readonly classIndex: number;
  readonly tenant: string;
  readonly seats: number;
  readonly lane: Lane;
}

/** The seat accounting of one policy. */
export class SeatBook {
  readonly #classes: readonly PolicyClass[];
  readonly #usable: number;
  readonly #reserve: number;
  readonly #emergencyCap: number;
  /** Class-lane seats in use, per class. */
  readonly #used: number[];
  /** Seats in use per tenant, per class (class lane only). */
  readonly #tenants: Map<string, number>[];
  #classTotal = 0;
  /** Σ max(0, floor − used) over the classes: seats kept free for floors not yet reached. */
  #floorGap = 0;
  #reserveUsed = 0;
  #emergencyUsed = 0;

  constructor(policy: Policy) {
    this.#classes = policy.classes;
    this.#usable = policy.usable;
    this.#reserve = policy.reserveSeats;
    this.#emergencyCap = policy.emergency?.maxSeats ?? 0;
    this.#used = policy.classes.map(() => 0);
    this.#tenants = policy.classes.map(() => new Map<string, number>());
    for (const c of policy.classes) this.#floorGap += c.floor;
  }

  /** Class-lane seats in use by class `i`. */
  used(i: number): number {
    return this.#used[i]!;
  }
  /** Seats of class `i` held by `tenant`. */
  tenantUse(i: number, tenant: string): number {
    return this.#tenants[i]!.get(tenant) ?? 0;
  }
  /** Tenants holding seats in class `i`. */
  tenantsIn(i: number): number {
    return this.#tenants[i]!.size;
  }
  get reserveUsed(): number {
    return this.#reserveUsed;
  }
  get emergencyUsed(): number {
    return this.#emergencyUsed;
  }
  /** Seats in use outside the reserve (class lanes and emergency). */
  get inUse(): number {
    return this.#classTotal + this.#emergencyUsed;
  }
  /** Seats kept free for the unreached part of every floor. */
  get floorGap(): number {
    return this.#floorGap;
  }

  /** Whether `seats` more in class `i`'s lane fit: physically, and within borrowing rules when above guarantee. */
  canTake(i: number, seats: number, mayBorrow: boolean): boolean {
    const c = this.#classes[i]!;
    const u = this.#used[i]! + seats;
    if (u > c.guaranteed && (!mayBorrow || u - c.guaranteed > c.borrowLimit)) return false;
    return this.#fits(c, this.#used[i]!, u, seats);
  }

  /** Whether `seats` emergency seats fit: under the lane's cap and without touching any floor. */
  canTakeEmergency(seats: number): boolean {
    if (this.#emergencyUsed + seats > this.#emergencyCap) return false;
    return this.#classTotal + this.#emergencyUsed + seats + this.#floorGap <= this.#usable;
  }

  /** Whether `seats` reserve seats fit. */
  canTakeReserve(seats: number): boolean {
    return this.#reserveUsed + seats <= this.#reserve;
  }

  #fits(c: PolicyClass, before: number, after: number, seats: number): boolean {
    const gapBefore = before < c.floor ? c.floor - before : 0;
    const gapAfter = after < c.floor ? c.floor - after : 0;
    return (
      this.#classTotal + this.#emergencyUsed + seats + this.#floorGap - gapBefore + gapAfter <= this.#usable
    );
  }

  /** Takes seats already checked with the matching `canTake…`; the caller keeps them as a SeatGrant. */
  take(i: number, tenant: string, seats: number, lane: Lane): void {
    if (lane === 'reserve') this.#reserveUsed += seats;
    else if (lane === 'emergency') this.#emergencyUsed += seats;
    else this.#move(i, tenant, seats);
  }

  /**
   * Holds (or with a negative count returns) seats outside every class: grants of a class a
   * policy swap removed. They count against the seats outside the reserve, no class's lane.
   */
  holdUnclassed(seats: number): void {
    this.#classTotal += seats;
  }

  /** Returns a grant's seats. */
  release(g: SeatGrant): void {
    if (g.lane === 'reserve') this.#reserveUsed -= g.seats;
    else if (g.lane === 'emergency') this.#emergencyUsed -= g.seats;
    else this.#move(g.classIndex, g.tenant, -g.seats);
  }

  #move(i: number, tenant: string, delta: number): void {
    const c = this.#classes[i]!;
    const before = this.#used[i]!;
    const after = before + delta;
    this.#used[i] = after;
    this.#classTotal += delta;
    this.#floorGap += (after < c.floor ? c.floor - after : 0) - (before < c.floor ? c.floor - before : 0);
    const t = this.#tenants[i]!;
    const held = (t.get(tenant) ?? 0) + delta;
    if (held === 0) t.delete(tenant);
    else t.set(tenant, held);
  }
}
