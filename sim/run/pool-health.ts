/**
 * The simulated pool's health as the policy sees it: healthy while every engine of the pool is up
 * and maintenance is off. The timeline keeps it (sim/run/world.ts): an engine going down
 * (`endpoint_down`, each `flap` down phase, `capacity_loss`) or coming back, and `maintenance`
 * on or off. A counter of engines down and a flag, so reading it is O(1) whatever the pool's size.
 */
export class PoolHealth {
  #down = 0;
  #maintenance = false;
  readonly #changed: () => void;

  /** @param changed called after every change of {@link healthy} (not on a no-op). */
  constructor(changed: () => void = () => {}) {
    this.#changed = changed;
  }

  /** Every engine of the pool is up and maintenance is off. */
  get healthy(): boolean {
    return this.#down === 0 && !this.#maintenance;
  }

  /** Engines of the pool down now. */
  get enginesDown(): number {
    return this.#down;
  }

  /** An engine that was up went down. */
  engineDown(): void {
    const was = this.healthy;
    this.#down++;
    this.#notify(was);
  }

  /** An engine that was down came back. */
  engineUp(): void {
    if (this.#down === 0) throw new Error('PoolHealth: an engine came up that was never down');
    const was = this.healthy;
    this.#down--;
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
