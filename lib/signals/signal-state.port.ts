/** Ports of the signals: the per-user signal state, the activity index and the idle check. */
import type { IdleCheck } from '../../events/idle-check.js';
import type { SignalState } from './signal-state.js';

export interface StoredSignalState {
  /** Whatever is stored (validated by the domain); undefined when there is none. */
  raw: unknown;
  /** Optimistic-lock version; null when no item exists. */
  version: number | null;
}

export interface SignalStateStore {
  load(userId: string): Promise<StoredSignalState>;
  /** Conditional write; false when someone else wrote since `expectedVersion`. */
  save(userId: string, state: SignalState, expectedVersion: number | null): Promise<boolean>;
  /**
   * Put users in the activity index for these days (their folds' `newActiveDays`), before
   * the states that count them are saved; several users in one request. Idempotent.
   */
  markActive(marks: ReadonlyArray<{ userId: string; day: string }>): Promise<void>;
}

export interface IdleScheduler {
  /** Ask to be told, after `delaySeconds`, whether the user has gone quiet since `lastTurnId`. */
  schedule(check: IdleCheck, delaySeconds: number): Promise<void>;
}

/** The activity index: users active on given days, with their per-day message counts. */
export interface ActivityIndex {
  /** Every user with a message on any of these UTC days (YYYY-MM-DD), once each. */
  activeUsers(days: readonly string[]): Promise<Array<{ userId: string; activity: Record<string, number> }>>;
}
