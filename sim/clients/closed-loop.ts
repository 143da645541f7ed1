/**
 * Closed-loop users: each of N users sends a request, waits for it to end, thinks, and sends again.
 * The host drives it: it schedules the sends {@link ClosedLoopUsers.start} returns, and on each logical
 * request's end (after any retries) asks {@link ClosedLoopUsers.onFinished} for the user's next send.
 */
import { createDistribution, type Distribution, type DistributionConfig } from './distributions.js';
import { requireInteger, requireNonNegative } from './errors.js';
import type { RandomFn } from './rng.js';

/** A plain closed-loop config, as found in a scenario file. */
export interface ClosedLoopConfig {
  /** Number of users. */
  users: number;
  /** Think time between the end of a request and the user's next send, ms. */
  thinkTimeMs: DistributionConfig;
  /** Virtual time of the first send, ms. Default 0. */
  startMs?: number;
  /** First sends spread evenly over [startMs, startMs + rampUpMs): user i at startMs + i·rampUpMs/users. Default 0. */
  rampUpMs?: number;
  /** No send at or after this time, ms. Default never. */
  stopAtMs?: number;
  /** Requests per user, then the user stops. Default unlimited. */
  requestsPerUser?: number;
}

/** A send the host should schedule. */
export interface UserSend {
  /** 0-based user index. */
  userId: number;
  /** Virtual time of the send, ms. */
  atMs: number;
}

/** N closed-loop users. Deterministic for a given RNG (think times draw from it, one draw per think). */
export class ClosedLoopUsers {
  readonly #think: Distribution;
  readonly #rng: RandomFn;
  readonly #users: number;
  readonly #startMs: number;
  readonly #rampUpMs: number;
  readonly #stopAtMs: number;
  readonly #perUser: number;
  readonly #sent: number[];
  readonly #busy: boolean[];
  #started = false;

  /** @throws ClientConfigError when a parameter is out of range. */
  constructor(config: ClosedLoopConfig, rng: RandomFn, field = 'closedLoop') {
    this.#users = requireInteger(`${field}.users`, config.users, 0);
    this.#think = createDistribution(
      { ...config.thinkTimeMs, min: Math.max(0, config.thinkTimeMs.min ?? 0) },
      { field: `${field}.thinkTimeMs` },
    );
    this.#rng = rng;
    this.#startMs = requireNonNegative(`${field}.startMs`, config.startMs ?? 0);
    this.#rampUpMs = requireNonNegative(`${field}.rampUpMs`, config.rampUpMs ?? 0);
    this.#stopAtMs = config.stopAtMs ?? Number.POSITIVE_INFINITY;
    this.#perUser =
      config.requestsPerUser === undefined
        ? Number.POSITIVE_INFINITY
        : requireInteger(`${field}.requestsPerUser`, config.requestsPerUser, 0);
    this.#sent = new Array<number>(this.#users).fill(0);
    this.#busy = new Array<boolean>(this.#users).fill(false);
  }

  /** Number of users. */
  get users(): number {
    return this.#users;
  }

  /** Users with a request scheduled or in flight. */
  get active(): number {
    return this.#busy.filter(Boolean).length;
  }

  /** Requests sent (scheduled) so far by `userId`. */
  sentBy(userId: number): number {
    return this.#sent[userId] ?? 0;
  }

  /**
   * The first send of every user, in user order. Call once.
   * @throws Error when called twice.
   */
  start(): UserSend[] {
    if (this.#started) throw new Error('ClosedLoopUsers.start: already started');
    this.#started = true;
    const out: UserSend[] = [];
    for (let u = 0; u < this.#users; u += 1) {
      const atMs = this.#startMs + (u * this.#rampUpMs) / this.#users;
      if (this.#take(u, atMs)) out.push({ userId: u, atMs });
    }
    return out;
  }

  /**
   * The user's request ended at `nowMs` (ms): returns the time of its next send (now + think time), or
   * undefined when the user is done (request budget spent, or the send would fall at or after stopAtMs).
   * @throws Error when the user has no request in flight.
   */
  onFinished(userId: number, nowMs: number): number | undefined {
    if (this.#busy[userId] !== true) {
      throw new Error(`ClosedLoopUsers.onFinished: user ${userId} has no request in flight`);
    }
    this.#busy[userId] = false;
    if ((this.#sent[userId] ?? 0) >= this.#perUser) return undefined;
    const atMs = nowMs + this.#think.sample(this.#rng);
    return this.#take(userId, atMs) ? atMs : undefined;
  }

  #take(userId: number, atMs: number): boolean {
    if (atMs >= this.#stopAtMs || (this.#sent[userId] ?? 0) >= this.#perUser) return false;
    this.#sent[userId] = (this.#sent[userId] ?? 0) + 1;
    this.#busy[userId] = true;
    return true;
  }
}
