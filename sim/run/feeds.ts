/**
 * The run's generated clients on the simulator's clock: the open-loop feeds of the schedule
 * (`sim/clients/schedule.ts`, the ones the load driver and the k6 plan send) and the closed-loop
 * users, each new request handed to `send`. A replayed trace is pulled separately (trace-pull.ts).
 */
import { ClosedLoopUsers } from '../clients/closed-loop.js';
import type { RequestDescriptor, RequestFactory } from '../clients/request-factory.js';
import type { RandomStreams } from '../clients/rng.js';
import { type ArrivalFeed, arrivalFeeds, nextArrival } from '../clients/schedule.js';
import type { Simulator } from '../kernel/simulator.js';
import type { ClientSetup } from '../scenario/client-config.js';

/** The generated clients of a run. */
export interface ClientFeeds {
  /** Schedules each open-loop feed's first arrival, then each closed-loop user's first send. */
  start(): void;
  /** A logical request ended (after any retries): schedules its closed-loop user's next send. */
  logicalEnd(d: RequestDescriptor, nowMs: number): void;
}

interface Feed extends ArrivalFeed {
  /** The tenant of the arrival scheduled next. */
  tenantIndex?: number | undefined;
}

/**
 * The open-loop feeds and closed-loop users of `setup`, sending nothing at or after `endMs`
 * (virtual ms). Nothing is scheduled until {@link ClientFeeds.start}.
 */
export function clientFeeds(
  sim: Simulator,
  setup: ClientSetup,
  factory: RequestFactory,
  streams: RandomStreams,
  endMs: number,
  send: (d: RequestDescriptor) => void,
): ClientFeeds {
  const closedUsers = setup.closedLoop
    ? new ClosedLoopUsers(setup.closedLoop, streams('clients.closed_loop'))
    : null;
  const userOf = new Map<number, number>();
  const sendUser = (user: number): void => {
    const d = factory.create(sim.now());
    userOf.set(d.logicalId, user);
    send(d);
  };
  // One pending arrival per feed, scheduled with the feed as its argument (no closure per arrival).
  const arrive = (feed: Feed): void => {
    if (sim.now() < feed.untilMs) send(factory.create(sim.now(), feed.tenantIndex));
    pump(feed);
  };
  const pump = (feed: Feed): void => {
    const n = nextArrival(feed, endMs);
    if (n === undefined) return;
    feed.tenantIndex = n.tenantIndex;
    sim.schedule(n.atMs, arrive, feed);
  };
  return {
    start() {
      const feeds: Feed[] = arrivalFeeds(setup, factory.tenants, streams, endMs);
      for (const f of feeds) pump(f);
      if (closedUsers)
        for (const s of closedUsers.start())
          if (s.atMs < endMs) sim.schedule(s.atMs, () => sendUser(s.userId));
    },
    logicalEnd(d, now) {
      if (closedUsers === null) return;
      const user = userOf.get(d.logicalId);
      if (user === undefined) return;
      userOf.delete(d.logicalId);
      const next = closedUsers.onFinished(user, now);
      if (next !== undefined && next < endMs) sim.schedule(next, () => sendUser(user));
    },
  };
}
