import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';

/** A Lambda SQS event holding these bodies (for invoking a handler directly). */
export function sqsEvent(bodies: ReadonlyArray<{ body: string; groupId?: string }>, queueArn = 'arn:aws:sqs:us-east-1:000000000000:local'): SQSEvent {
  const now = String(Date.now());
  return {
    Records: bodies.map(({ body, groupId }, i) => ({
      messageId: randomUUID(),
      receiptHandle: `local-${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: now,
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: now,
        ...(groupId ? { MessageGroupId: groupId, SequenceNumber: String(i + 1) } : {}),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: 'us-east-1',
    })),
  };
}
