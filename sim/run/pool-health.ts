/**
 * The simulated pool's health as the policy sees it, by the proxy's definition
 * (proxy/policy/conditions.ts): healthy while the rule has endpoints, every endpoint of the rule
 * is usable (its engine up) and maintenance is off. The timeline keeps it (sim/run/world.ts): an
 * engine going down (`endpoint_down`, each `flap` down phase, `capacity_loss`) or coming back,
 * `maintenance` on or off, and a `replace` changing which engines the rule lists (an engine out
 * of the rule, such as a standby not yet in service, does not count, down or up). Counters, so
 * reading it is O(1) whatever the pool's size; only a `replace` walks the pool.
 */
export class PoolHealth {
  /** 1 for an engine (by pool index) the rule lists. */
  readonly #member: Uint8Array;
  /** 1 for an engine that is down. */
  readonly #down: Uint8Array;
  #members: number;
  #downMembers = 0;
  #maintenance = false;
  readonly #changed: () => void;

  /**
   * @param size engines in the pool, all up and all in the rule at the start
   * @param changed called after every change of {@link healthy} (not on a no-op)
   */
  constructor(size: number, changed: () => void = () => {}) {
    this.#member = new Uint8Array(size).fill(1);
    this.#down = new Uint8Array(size);
    this.#members = size;
    this.#changed = changed;
  }

  /** The rule lists an endpoint, every one it lists is up, and maintenance is off. */
  get healthy(): boolean {
    return this.#members > 0 && this.#downMembers === 0 && !this.#maintenance;
  }

  /** Maintenance mode is on (the proxy then offers no fallback pool either). */
  get maintenance(): boolean {
    return this.#maintenance;
  }

  /** Engines the rule lists that are down now. */
  get enginesDown(): number {
    return this.#downMembers;
  }

  /** Engine `i` went down (a no-op when it already was). */
  engineDown(i: number): void {
    if (this.#down[i] !== 0) return;
    const was = this.healthy;
    this.#down[i] = 1;
    if (this.#member[i] !== 0) this.#downMembers++;
    this.#notify(was);
  }

  /** Engine `i` came back (a no-op when it was up). */
  engineUp(i: number): void {
    if (this.#down[i] !== 1) return;
    const was = this.healthy;
    this.#down[i] = 0;
    if (this.#member[i] !== 0) this.#downMembers--;
    this.#notify(was);
  }

  /** The rule now lists exactly the engines `indexes` (a `replace`). */
  setMembers(indexes: Iterable<number>): void {
    const was = this.healthy;
    this.#member.fill(0);
    for (const i of indexes) if (i >= 0 && i < this.#member.length) this.#member[i] = 1;
    this.#members = 0;
    this.#downMembers = 0;
    for (let i = 0; i < this.#member.length; i++) {
      if (this.#member[i] === 0) continue;
      this.#members++;
      if (this.#down[i] !== 0) this.#downMembers++;
    }
    this.#notify(was);
  }

  /** Maintenance mode on or off (the timeline's `maintenance` event). */
  setMaintenance(enabled: boolean): void {
    const was = this.healthy;
    this.#maintenance = enabled;
    this.#notify(was);
  }

  #notify(was: boolean): void {
    if (this.healthy !== was) this.#changed();
  }
}
