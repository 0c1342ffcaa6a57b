import { ChangeMessageVisibilityCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * When a message the function failed comes back. Lambda leaves a failed message in the queue
 * and it "will again reappear in the queue" after the queue's visibility timeout
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html); a
 * ChangeMessageVisibility on its receipt handle sets that timeout for this receipt only,
 * counted from the call ("the timeout for the message would be extended … beyond the time of
 * the ChangeMessageVisibility call"; a later receive reverts to the queue's value:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html).
 * The event source's role already holds sqs:ChangeMessageVisibility on its queue (CDK's
 * SqsEventSource grants it with the consume actions).
 */
export class SqsRedelivery {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /** The message under this receipt handle becomes visible again `seconds` from now (0–43,200). */
  async after(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  }
}
