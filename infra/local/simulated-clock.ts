import type { Clock } from '../../lib/kernel/runtime.port.js';

/**
 * The local harness's clock: a replay of weeks of conversation moves it to each event's time
 * (schedules fire as it passes them), and it runs on at real speed from there. Handlers
 * get it through their factories in place of the wall clock.
 */
export class SimulatedClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Read `to` now, and run on from there at real speed. */
  set(to: Date): void {
    this.offsetMs = to.getTime() - Date.now();
  }
}
