/**
 * The emulator's engine clock: real time from `performance.now()`, scaled.
 *
 * Convention: engine ms = real ms × `timeScale`. With `timeScale` 2 the engine runs twice as
 * fast as real time (a 100 ms engine step takes 50 real ms); with 0.5 it runs at half speed.
 * Engine time starts at 0 when the clock is made.
 */
export class ScaledClock {
  /** Engine ms per real ms (> 0). */
  readonly timeScale: number;
  readonly #originMs: number;

  /** @param timeScale engine ms per real ms, > 0 */
  constructor(timeScale = 1) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
      throw new RangeError(`time scale: ${timeScale} is not a finite number > 0`);
    }
    this.timeScale = timeScale;
    this.#originMs = performance.now();
  }

  /** Engine time now, ms since the clock was made. */
  now(): number {
    return (performance.now() - this.#originMs) * this.timeScale;
  }

  /** Real ms until engine time `atMs` (≥ 0). */
  realDelayUntil(atMs: number): number {
    return Math.max(0, (atMs - this.now()) / this.timeScale);
  }
}
