import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { IdleCheck } from '../../events/idle-check.js';
import type { IdleScheduler } from './signal-state.port.js';

/** Idle checks as delayed messages on the IdleQueue (a standard queue: per-message delays up to 15 minutes). */
export class SqsIdleScheduler implements IdleScheduler {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async schedule(check: IdleCheck, delaySeconds: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(check),
        DelaySeconds: Math.min(900, Math.max(0, delaySeconds)),
      }),
    );
  }
}
