/**
 * Retry budgets: one logical intent (an idempotency key) shares one budget of attempts. A new
 * attempt while the intent is in flight, or after it completed, is a duplicate (counted, never a
 * second seat); an attempt past the budget is blocked. Bounded: finished intents are forgotten
 * after `rememberMs`, and past `maxIntents` the oldest finished ones first.
 */

/** Entries the forgetting sweep looks at per new attempt (amortised: each is looked at once per pass). */
const FORGET_STEPS = 8;

/** Where an intent stands. */
export type IntentState = 'in_flight' | 'completed' | 'failed';

/** What a new attempt of an intent is. */
export type AttemptVerdict = 'first' | 'retry' | 'duplicate_in_flight' | 'duplicate_completed' | 'exhausted';

interface Intent {
  attempts: number;
  state: IntentState;
  touchedMs: number;
}

/** The intents of one policy. */
export class RetryBudget {
  #budget: number;
  #rememberMs: number;
  #max: number;
  /** In insertion (= last touched) order: re-inserted on every change. */
  readonly #intents = new Map<string, Intent>();
  duplicates = 0;
  blocked = 0;
  retries = 0;
  /** First attempts: the intents seen (attempts = firsts + retries). */
  firsts = 0;

  constructor(budgetPerIntent: number, rememberMs: number, maxIntents: number) {
    this.#budget = budgetPerIntent;
    this.#rememberMs = rememberMs;
    this.#max = maxIntents;
  }

  /** New bounds for the remembered intents (a policy swap): attempts already made are kept. */
  configure(budgetPerIntent: number, rememberMs: number, maxIntents: number): void {
    this.#budget = budgetPerIntent;
    this.#rememberMs = rememberMs;
    this.#max = maxIntents;
  }

  get size(): number {
    return this.#intents.size;
  }

  /** The state of an intent, if remembered. */
  state(key: string): { attempts: number; state: IntentState } | undefined {
    const i = this.#intents.get(key);
    return i === undefined ? undefined : { attempts: i.attempts, state: i.state };
  }

  /** Judges a new attempt; a first attempt or retry is recorded as in flight. */
  begin(key: string, now: number): AttemptVerdict {
    this.#forget(now);
    const i = this.#intents.get(key);
    if (i === undefined) {
      this.firsts++;
      this.#put(key, { attempts: 1, state: 'in_flight', touchedMs: now });
      return 'first';
    }
    if (i.state === 'in_flight') {
      this.duplicates++;
      return 'duplicate_in_flight';
    }
    if (i.state === 'completed') {
      this.duplicates++;
      return 'duplicate_completed';
    }
    if (i.attempts >= this.#budget) {
      this.blocked++;
      return 'exhausted';
    }
    this.retries++;
    this.#put(key, { attempts: i.attempts + 1, state: 'in_flight', touchedMs: now });
    return 'retry';
  }

  /** Ends the current attempt of an intent: completed (later attempts are duplicates) or failed (may retry). */
  end(key: string, outcome: 'completed' | 'failed', now: number): void {
    const i = this.#intents.get(key);
    if (i === undefined || i.state !== 'in_flight') return;
    this.#put(key, { attempts: i.attempts, state: outcome, touchedMs: now });
  }

  #put(key: string, i: Intent): void {
    this.#intents.delete(key);
    this.#intents.set(key, i);
    if (this.#intents.size > this.#max) this.#evictOne();
  }

  /** Drops the oldest finished intent (an in-flight one is kept: it holds or awaits a seat). */
  #evictOne(): void {
    for (const [k, i] of this.#intents) {
      if (i.state !== 'in_flight') {
        this.#intents.delete(k);
        return;
      }
    }
  }

  /**
   * Forgets finished intents older than `rememberMs`, oldest first, a few per call: an in-flight
   * one met on the way moves to the back (it is still wanted) instead of stopping the sweep.
   */
  #forget(now: number): void {
    for (let step = 0; step < FORGET_STEPS; step++) {
      const head = this.#intents.entries().next();
      if (head.done === true) return;
      const [k, i] = head.value;
      if (now - i.touchedMs < this.#rememberMs) return;
      this.#intents.delete(k);
      if (i.state === 'in_flight') this.#intents.set(k, i);
    }
  }
}
