/**
 * Runs an {@link Engine} on the simulator's virtual clock: keeps exactly one pending step per
 * engine (a simulator timer), at `engine.nextStepAt()`, and hands every step's outcome to a listener.
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
      const outcome = this.engine.step(this.#sim.now());
      this.#reschedule();
      this.#onStep(outcome);
    });
  }

  /** Submits at the current virtual time. */
  submit(request: R): SubmitResult {
    const result = this.engine.submit(request, this.#sim.now());
    this.#reschedule();
    return result;
  }

  /** Aborts at the current virtual time. */
  abort(id: string): R | undefined {
    const request = this.engine.abort(id, this.#sim.now());
    this.#reschedule();
    return request;
  }

  /** Restarts the engine at the current virtual time. @returns the requests lost */
  restart(): R[] {
    const lost = this.engine.restart(this.#sim.now());
    this.#reschedule();
    return lost;
  }

  #reschedule(): void {
    const at = this.engine.nextStepAt();
    const timer = this.#timer;
    if (at === this.#scheduledAtMs && timer.pending) return;
    timer.clear();
    this.#scheduledAtMs = Number.NaN;
    if (at === null) return;
    timer.set(Math.max(at, this.#sim.now()));
    this.#scheduledAtMs = at;
  }
}
