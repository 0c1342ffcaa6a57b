import type { Clock } from './runtime.port.js';

/**
 * The handlers' clock in Lambda: the wall clock. Handler factories take a Clock, so the
 * local harness hands them its simulated one (infra/local/simulated-clock.ts) instead.
 */
export const systemClock: Clock = { now: () => new Date() };
