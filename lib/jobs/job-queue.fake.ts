/** An in-memory job queue for tests, with a recording variant. */
import type { Job } from '../../events/job.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { JobQueue } from './job-queue.port.js';

export class MemoryJobQueue implements JobQueue {
  readonly jobs: Job[] = [];
  async enqueue(job: Job) {
    this.jobs.push(job);
  }
}

export class RecordingJobQueue extends MemoryJobQueue {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async enqueue(job: Job) {
    this.log.add('jobs', job.userId);
    return super.enqueue(job);
  }
}
