/**
 * The life of one exchange as a small state machine, apart from sockets so
 * that it can be driven through every order of its events in a unit test.
 *
 * Node does not promise an order between a request's `end`, its response's
 * `finish`/`close`, its socket's `close` and the gate's turn: an h2 stream
 * reset right after its body emits the response's `finish` and `close`
 * before the request's `end`; a pipelined HTTP/1.1 response queued behind
 * another never emits either when the socket closes. So this one object
 * decides that the exchange is over (`answered` or `gone`, whichever comes
 * first), and from then on a late body never leads to a decision and a late
 * unit is given back at once. The held unit is released exactly once.
 */

/** Where an exchange stands. */
export type LifePhase = 'reading' | 'deciding' | 'waiting' | 'running' | 'answering' | 'over';

/** What the machine asks its exchange to do; each is called at most once per exchange. */
export interface LifeHooks {
  /** Give the held unit back to the gate. */
  releaseUnit(): void;
  /** Leave the gate's queue. */
  cancelWait(): void;
  /** Cut the backend leg (the client left while it ran). */
  abortLeg(): void;
  /** The exchange is over: write its record. `gone`: the client left before the answer was written. */
  over(gone: boolean): void;
}

export class ExchangeLife {
  #phase: LifePhase = 'reading';
  #holding = false;

  constructor(readonly hooks: LifeHooks) {}

  get phase(): LifePhase {
    return this.#phase;
  }

  get over(): boolean {
    return this.#phase === 'over';
  }

  /** Whether a unit is held and not yet released. */
  get holding(): boolean {
    return this.#holding;
  }

  /** The body was read (or there is none to read first): true when the exchange is to be decided now. */
  bodyRead(): boolean {
    if (this.#phase !== 'reading') return false;
    this.#phase = 'deciding';
    return true;
  }

  /** The gate queued the exchange. */
  queued(): void {
    if (this.#phase === 'deciding') this.#phase = 'waiting';
  }

  /** Whether a waiter's turn may be taken (the gate asks synchronously). */
  get canTakeTurn(): boolean {
    return this.#phase === 'waiting';
  }

  /**
   * A unit was handed over (an admit, or a waiter's turn).
   * @returns true when the exchange is to run with it; false when it was over: the unit is given back at once
   */
  took(): boolean {
    if (this.#phase === 'over') {
      this.hooks.releaseUnit();
      return false;
    }
    if (this.#holding) {
      // A second unit for one exchange cannot be used: give it back.
      this.hooks.releaseUnit();
      return false;
    }
    this.#holding = true;
    this.#phase = 'running';
    return true;
  }

  /** The exchange runs a backend leg without a unit (bypass). */
  running(): void {
    if (this.#phase !== 'over') this.#phase = 'running';
  }

  /** The proxy answers the exchange itself (a refusal, an error): no leg runs, or none any more. */
  answering(): void {
    if (this.#phase !== 'over') this.#phase = 'answering';
  }

  /** Gives the held unit back early (a failed leg, a local answer after the admit); idempotent. */
  release(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.hooks.releaseUnit();
  }

  /** The response was written in full. */
  answered(): void {
    this.#end(false);
  }

  /** The client left (response or socket closed before the answer was written, stream reset). */
  gone(): void {
    this.#end(true);
  }

  #end(gone: boolean): void {
    const was = this.#phase;
    if (was === 'over') return;
    this.#phase = 'over';
    if (was === 'waiting') this.hooks.cancelWait();
    if (gone && was === 'running') this.hooks.abortLeg();
    this.release();
    this.hooks.over(gone);
  }
}
