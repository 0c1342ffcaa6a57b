/** Ports of the summaries: where summaries are kept, and what the sleep-time runs read instead of raw messages. */
import type { SummaryPair } from './summary.js';
import type { BatchLog } from '../batches/batch-log.js';
import type { SummaryRecordView } from '../items/source-items.js';

export interface SummaryStore {
  exists(userId: string, summaryId: string): Promise<boolean>;
  /** Write both documents of the turn pair and its record (the record last: the commit record). */
  write(pair: SummaryPair): Promise<void>;
  /** Soft delete (req R-SUM-7): deleted=true on the record and both documents; nothing is removed. */
  softDelete(userId: string, summaryId: string): Promise<boolean>;
  /** Every summary of the user (deleted ones included; callers filter), newest first by `createdAt`: the whole history, for R-SUM-10's aggregate. */
  list(userId: string): Promise<SummaryRecordView[]>;
  /**
   * The newest `limit` summaries by the turns they cover (key order: last turn, then id, both
   * descending), live ones only unless `includeDeleted`: a page, however long the history.
   */
  newest(userId: string, options: { limit: number; includeDeleted: boolean }): Promise<SummaryRecordView[]>;
  /** A person's edit of a live summary's text (the old text kept in its `edits`); null when there is none to edit, or it changed meanwhile. */
  edit(
    userId: string,
    summaryId: string,
    edit: { text: string; by: string; at: string; reason?: string | undefined },
  ): Promise<SummaryRecordView | null>;
  /** These summaries were returned to an agent once more (a deleted one is counted apart). */
  countResurrections(userId: string, summaryIds: readonly string[]): Promise<void>;
  /** These summaries (deleted ones included), by id; an id that names none is left out. */
  byIds(userId: string, summaryIds: readonly string[]): Promise<SummaryRecordView[]>;
}

/**
 * A sleep-time run's window: its times, and (when the run knows it) the lowest turn it is
 * about — items over earlier turns only are not read (the nightly's day of turns).
 */
export interface WindowBounds {
  fromIso: string;
  toIso: string;
  sinceTurn?: number;
}

/** What the sleep-time runs read instead of raw messages: the weekly always, the nightly for what summaries cover. */
export interface SummarySource {
  /** Batch logs whose input time is in the window (ordered by batch id). */
  batchLogs(userId: string, window: WindowBounds): Promise<BatchLog[]>;
  /** Context summaries (req R-SUM) written in the window, each with the turns it summarised (ordered by id). */
  summaries(
    userId: string,
    window: WindowBounds,
  ): Promise<Array<{ id: string; createdAt: string; text: string; sourceTurns?: number[] }>>;
}
