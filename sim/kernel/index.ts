export type { Clock } from './clock.js';
export { msToUs, US_PER_MS, usToMs } from './clock.js';
export type { EventCallback, EventHandle, PoppedEvent } from './event-queue.js';
export { EventQueue, MAX_PENDING_EVENTS } from './event-queue.js';
export type { LognormalParams } from './rng.js';
export { logGamma, lognormalFromMeanCv, lognormalFromMedianP95, Rng, rngStream } from './rng.js';
export { arc4Uniform, seededStreams, type Uniform } from './seeded-streams.js';
export { Simulator } from './simulator.js';
