/**
 * The pooled keep-alive client to the endpoints: one node:http Agent for
 * the process, its sockets counted by the accept valve as backend legs.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AcceptValve } from './accept-valve.js';

/** Idle time after which a pooled backend socket is closed, in ms (below Node's 5 s server keep-alive). */
export const BACKEND_IDLE_MS = 4_000;

/** Builds the backend agent. */
export function backendAgent(valve: AcceptValve): http.Agent {
  const agent = new http.Agent({
    keepAlive: true,
    keepAliveMsecs: 1_000,
    maxSockets: Number.POSITIVE_INFINITY,
    maxFreeSockets: 1_024,
    scheduling: 'lifo',
    timeout: BACKEND_IDLE_MS,
  });
  const create = (
    agent as unknown as { createConnection: (...a: unknown[]) => Socket }
  ).createConnection.bind(agent);
  (agent as unknown as { createConnection: (...a: unknown[]) => Socket }).createConnection = (
    ...args: unknown[]
  ) => {
    const s = create(...args);
    s.setNoDelay(true);
    valve.track(s);
    return s;
  };
  return agent;
}
