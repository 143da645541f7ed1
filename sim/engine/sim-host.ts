/**
 * Runs an {@link Engine} on the simulator's virtual clock: keeps exactly one pending event per
 * engine, at `engine.nextStepAt()`, and hands every step's outcome to a listener.
 */
import type { EventHandle, Simulator } from '../kernel/simulator.js';
import type { Engine, EngineRequest, StepOutcome, SubmitResult } from './types.js';

export class SimEngineHost<R extends EngineRequest = EngineRequest> {
  readonly engine: Engine<R>;
  readonly #sim: Simulator;
  readonly #onStep: (outcome: StepOutcome<R>) => void;
  readonly #fire: () => void;
  #handle: EventHandle | null = null;
  #scheduledAtMs = Number.NaN;

  /**
   * @param onStep called after every engine step with its outcome (tokens at `sim.now()`)
   */
  constructor(sim: Simulator, engine: Engine<R>, onStep: (outcome: StepOutcome<R>) => void) {
    this.#sim = sim;
    this.engine = engine;
    this.#onStep = onStep;
    this.#fire = () => {
      this.#handle = null;
      const outcome = this.engine.step(this.#sim.now());
      this.#reschedule();
      this.#onStep(outcome);
    };
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
    if (at === this.#scheduledAtMs && this.#handle !== null) return;
    if (this.#handle !== null) this.#sim.cancel(this.#handle);
    this.#handle = null;
    this.#scheduledAtMs = Number.NaN;
    if (at === null) return;
    const when = Math.max(at, this.#sim.now());
    this.#handle = this.#sim.schedule(when, this.#fire);
    this.#scheduledAtMs = at;
  }
}
