/**
 * The tool phase of an admitted request: the retrieval or tool calls an agent makes after the gate
 * admitted it and before its generation reaches the engine, one after another, each taking its
 * drawn time (`RequestDescriptor.toolCallsMs`) times the tool slowdown in force when the call
 * starts. The request holds its gate permit or policy seats all along and uses no engine: the
 * essay's "tool and retrieval slowdown behind healthy inference". Virtual time only.
 */
import type { EventHandle, Simulator } from '../kernel/simulator.js';

/** A request that may make tool calls (the run's attempt). */
export interface ToolCaller {
  readonly d: { readonly toolCallsMs?: readonly number[] };
  /** The end of its tool call in progress, when one is; null otherwise. */
  toolEvent: EventHandle | null;
  /** Tool calls it has finished. */
  toolCallsDone: number;
}

/** The tool calls of admitted requests on the run's clock, with the knob a `tool_slowdown` turns. */
export class ToolPhase<A extends ToolCaller> {
  readonly #sim: Simulator;
  readonly #done: (a: A) => void;
  /** Multiplier of every tool call's time from its start (1 = normal), set by `tool_slowdown` events. */
  slowdown = 1;
  readonly #onCallDone = (a: A): void => this.#callDone(a);

  /** @param done called when a request's last tool call ends (not when its phase is cancelled) */
  constructor(sim: Simulator, done: (a: A) => void) {
    this.#sim = sim;
    this.#done = done;
  }

  /**
   * Starts `a`'s tool calls now. @returns false when they take no time at all (none, or all 0 ms:
   * go straight on; nothing is scheduled, so a run without tool time is unchanged)
   */
  start(a: A): boolean {
    const calls = a.d.toolCallsMs;
    if (calls === undefined || !calls.some((ms) => ms > 0)) return false;
    a.toolCallsDone = 0;
    this.#call(a, calls[0]!);
    return true;
  }

  /** Ends `a`'s tool phase early (its client left, or it ended otherwise): its call in progress is dropped. */
  cancel(a: A): void {
    if (a.toolEvent === null) return;
    this.#sim.cancel(a.toolEvent);
    a.toolEvent = null;
  }

  #call(a: A, ms: number): void {
    a.toolEvent = this.#sim.after(Math.max(0, ms) * this.slowdown, this.#onCallDone, a);
  }

  #callDone(a: A): void {
    a.toolEvent = null;
    a.toolCallsDone++;
    const calls = a.d.toolCallsMs as readonly number[];
    if (a.toolCallsDone < calls.length) this.#call(a, calls[a.toolCallsDone]!);
    else this.#done(a);
  }
}
