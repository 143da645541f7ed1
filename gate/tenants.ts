/**
 * The tenant table of one pool: up to 64 tenants hold a slot of their own;
 * tenants past that share one overflow slot and are held together to one
 * share. A slot is freed as soon as its tenant holds nothing, so the table
 * bounds the tenants active at once, not the tenants known.
 */
import type { Waiter } from './queue.js';

/** Slots of a pool's tenant table, before the overflow slot. */
export const TENANT_TABLE_SLOTS = 64;

/** One tenant's holdings on a pool. */
export class TenantSlot {
  /** Executing requests of this tenant (units of the service ceiling). */
  exec = 0;
  /** Waiting requests of this tenant. */
  queued = 0;
  /** Oldest and newest waiter of this tenant, linked through `tnext`/`tprev`. */
  head: Waiter | null = null;
  tail: Waiter | null = null;
  /** @param key tenant id ('' for keyless traffic) @param overflow true for the shared overflow slot */
  constructor(
    readonly key: string,
    readonly overflow: boolean,
  ) {}
}

export class TenantTable {
  readonly #slots = new Map<string, TenantSlot>();
  readonly #overflow = new TenantSlot('(overflow)', true);

  /**
   * The slot for `key`, creating one if the table has room, else the shared overflow slot.
   */
  slotFor(key: string): TenantSlot {
    const s = this.#slots.get(key);
    if (s !== undefined) return s;
    if (this.#slots.size >= TENANT_TABLE_SLOTS) return this.#overflow;
    const created = new TenantSlot(key, false);
    this.#slots.set(key, created);
    return created;
  }

  /** Frees the slot when its tenant holds nothing (the overflow slot is never freed). */
  release(slot: TenantSlot): void {
    if (!slot.overflow && slot.exec === 0 && slot.queued === 0 && this.#slots.get(slot.key) === slot) {
      this.#slots.delete(slot.key);
    }
  }

  /** Tenants holding a unit or waiting right now (the overflow slot counts once when in use). */
  get active(): number {
    const o = this.#overflow;
    return this.#slots.size + (o.exec > 0 || o.queued > 0 ? 1 : 0);
  }

  /** Every slot in use, the overflow slot included when it holds something. */
  *inUse(): IterableIterator<TenantSlot> {
    yield* this.#slots.values();
    if (this.#overflow.exec > 0 || this.#overflow.queued > 0) yield this.#overflow;
  }

  /** Every slot with something waiting, the overflow slot included. */
  *waitingSlots(): IterableIterator<TenantSlot> {
    for (const s of this.#slots.values()) if (s.queued > 0) yield s;
    if (this.#overflow.queued > 0) yield this.#overflow;
  }
}
