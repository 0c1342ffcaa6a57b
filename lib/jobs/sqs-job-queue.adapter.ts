import { createHash } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Job } from '../../events/job.js';
import type { JobQueue } from './job-queue.port.js';

/**
 * FIFO deduplication id of a job: its user and trigger-derived job id, hashed to SQS's 128-char
 * limit. A job sent back by its batch inference job (`onDemand`) has an id of its own: SQS accepts
 * and does not deliver a message whose deduplication id it saw in the last 5 minutes ("Message
 * deduplication ID", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html),
 * and the routine reflection it answers was delivered once already (lib/batch-inference/routine-batch.ts).
 */
export const jobDeduplicationId = (job: Pick<Job, 'userId' | 'jobId' | 'onDemand'>): string =>
  createHash('sha256')
    .update(`${job.userId}\n${job.jobId}${job.onDemand ? '\non-demand' : ''}`)
    .digest('hex');

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
