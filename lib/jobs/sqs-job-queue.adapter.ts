import { createHash } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Job } from '../../events/job.js';
import type { JobQueue } from './job-queue.port.js';

/** FIFO deduplication id of a job: its user and trigger-derived job id, hashed to SQS's 128-char limit. */
export const jobDeduplicationId = (job: Pick<Job, 'userId' | 'jobId'>): string =>
  createHash('sha256').update(`${job.userId}\n${job.jobId}`).digest('hex');

export class SqsJobQueue implements JobQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(job: Job): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(job),
        MessageGroupId: job.userId,
        MessageDeduplicationId: jobDeduplicationId(job),
      }),
    );
  }
}
