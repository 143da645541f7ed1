/**
 * Runs an {@link Engine} on the simulator's virtual clock: keeps exactly one pending step per
 * engine (a simulator timer), at `engine.nextStepAt()`, and hands every step's outcome to a listener.
 *
 * An engine that plans steps ahead (`runAhead`) has its timer at the last planned step; the
 * host brings it up to now ({@link SimEngineHost.sync}) before anything reads or changes it.
 * A planned step that ends at this very instant counts as run when its timer, had it been
 * set for that step, would already have fired ({@link Simulator.timerHasRunNow}): the order
 * is then that of stepping one event at a time.
 */
import type { SimTimer, Simulator } from '../kernel/simulator.js';
import type { Engine, EngineRequest, StepOutcome, SubmitResult } from './types.js';

export class SimEngineHost<R extends EngineRequest = EngineRequest> {
  readonly engine: Engine<R>;
  readonly #sim: Simulator;
  readonly #onStep: (outcome: StepOutcome<R>) => void;
  /** The engine's next step. */
  readonly #timer: SimTimer;
  #scheduledAtMs = Number.NaN;

  /**
   * @param onStep called after every engine step with its outcome (tokens at `sim.now()`)
   */
  constructor(sim: Simulator, engine: Engine<R>, onStep: (outcome: StepOutcome<R>) => void) {
    this.#sim = sim;
    this.engine = engine;
    this.#onStep = onStep;
    this.#timer = sim.timer(() => {
      const now = this.#sim.now();
      if (this.engine.catchUp !== undefined) this.#sim.countInline(this.engine.catchUp(now, false));
      const outcome = this.engine.step(now);
      this.#reschedule();
      this.#onStep(outcome);
    });
  }

  /**
   * Applies the steps planned ahead that have run by now, so that the engine's state (KV
   * usage, tokens of its requests) is current. Every method here does this first; a host
   * calls it before reading the engine directly.
   */
  sync(): void {
    const engine = this.engine;
    if (engine.catchUp === undefined) return;
    const n = engine.catchUp(this.#sim.now(), this.#sim.timerHasRunNow(this.#timer.index));
    if (n > 0) this.#sim.countInline(n);
  }

  /** At the end of a run (every event due by now has run): applies every planned step that ends by now. */
  settle(): void {
    const n = this.engine.catchUp?.(this.#sim.now(), true) ?? 0;
    if (n > 0) this.#sim.countInline(n);
  }

  /** Call before changing an input of the engine's step times (a slowdown): drops the steps planned with the old one. */
  retime(): void {
    this.sync();
    this.engine.dropRunAhead?.();
    this.#reschedule();
  }

  /** Submits at the current virtual time. */
  submit(request: R): SubmitResult {
    this.sync();
    const result = this.engine.submit(request, this.#sim.now());
    this.#reschedule();
    return result;
  }

  /** Aborts at the current virtual time. */
  abort(id: string): R | undefined {
    this.sync();
    const request = this.engine.abort(id, this.#sim.now());
    this.#reschedule();
    return request;
  }

  /** Restarts the engine at the current virtual time. @returns the requests lost */
  restart(): R[] {
    this.sync();
    const lost = this.engine.restart(this.#sim.now());
    this.#reschedule();
    return lost;
  }

  #reschedule(): void {
    const at = this.engine.nextStepAt();
    const timer = this.#timer;
    if (at === this.#scheduledAtMs && timer.pending) return;
    if (at === null) {
      timer.clear();
      this.#scheduledAtMs = Number.NaN;
      return;
    }
    // Setting replaces a pending time: one update of the timer set, not a clear and a set.
    timer.set(Math.max(at, this.#sim.now()));
    this.#scheduledAtMs = at;
  }
}
