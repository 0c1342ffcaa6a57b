/** The sleep-time runs' log. */
import type { SleepTimeRun } from './run-log.js';

export interface SleepTimeLogStore {
  /**
   * Whether the run is logged: its record's key follows from the job (kind, the job's requested
   * time, which is the run's `startedAt`, and its id), so this reads the record itself.
   */
  exists(run: Pick<SleepTimeRun, 'userId' | 'kind' | 'startedAt' | 'runId'>): Promise<boolean>;
  /** Record a run (this record is its commit record), with an optional markdown document for people. */
  put(run: SleepTimeRun): Promise<void>;
  /** Runs of one kind whose start lies in [fromIso, toIso], oldest first. */
  list(userId: string, kind: SleepTimeRun['kind'], fromIso: string, toIso: string): Promise<SleepTimeRun[]>;
  /** The newest `limit` runs of one kind, newest first: a page, however many runs the user has. */
  newest(userId: string, kind: SleepTimeRun['kind'], limit: number): Promise<SleepTimeRun[]>;
  latest(userId: string, kind: SleepTimeRun['kind']): Promise<SleepTimeRun | null>;
}
