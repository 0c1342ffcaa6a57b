/** Ports of the batches: the batch log, written by the reflector and read by the API. */
import type { BatchLog } from './batch-log.js';

export interface BatchLogReader {
  /** The newest `limit` logs' listing attributes, newest first by the turns they cover (key order): a page, however long the history. */
  list(userId: string, limit: number): Promise<Array<Record<string, unknown>>>;
  get(userId: string, batchId: string): Promise<BatchLog | null>;
}

export interface BatchLogStore {
  exists(userId: string, batchId: string): Promise<boolean>;
  /** Write the JSON log and its summary item. Idempotent by batch id. */
  write(log: BatchLog): Promise<string>;
  /** Log a job that failed its last try and goes to the DLQ (not a commit: a redrive still runs it). */
  writeFailure(log: BatchLog): Promise<string>;
}

/**
 * A batch job arrived before the signal state recorded it: the ingestion that cut the
 * batch enqueues the job, then writes the state, and that write has not landed (yet) —
 * it raced the job, failed, or its function died and the turns will come again. Retry
 * later: running now would leave the batch waiting in the state forever (its completion
 * found nothing to complete) once the write lands.
 */
export class BatchNotRecordedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchNotRecordedError';
  }
}
