/** The job queue: where batch, summary, sleep-time and forget jobs wait. */
import type { Job } from '../../events/job.js';

export interface JobQueue {
  /** Enqueue on the FIFO queue, group = userId, deduplication id derived from the job id. */
  enqueue(job: Job): Promise<void>;
}
