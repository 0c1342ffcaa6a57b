import type { Clock } from '../ports.js';

let offsetMs = 0;

/**
 * The handlers' clock. In Lambda it is the wall clock. The local stack runs a simulated
 * clock (a replay of weeks of conversation moves it to each event's time, and schedules
 * fire as it passes them) by setting an offset; nothing in the cloud ever sets it.
 */
export const systemClock: Clock = { now: () => new Date(Date.now() + offsetMs) };

/** Local stack only: make `systemClock` read `to` now (and run on from there at real speed). */
export function setLocalClock(to: Date): void {
  offsetMs = to.getTime() - Date.now();
}
