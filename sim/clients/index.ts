/** Client models of the simulator: arrivals, closed-loop users, token distributions, traces, tenants, retries. */
export * from './arrivals.js';
export * from './closed-loop.js';
export * from './decision-record.js';
export * from './distributions.js';
export * from './errors.js';
export * from './rate-profile.js';
export * from './request-factory.js';
export * from './retry.js';
export * from './rng.js';
export * from './schedule.js';
export * from './tenants.js';
export * from './trace-empirical.js';
export * from './trace-files.js';
export * from './trace-parse.js';
export * from './trace-replay.js';
