/**
 * Replay what the dead-letter queues hold, once its cause is fixed: each message goes back
 * to its source queue (same FIFO group, so a user's order holds) and leaves the DLQ only
 * after it was sent. With each message comes its reason where the service recorded one:
 * a job parked after its last try has an aborted log under
 * `users/{u}/Logs/reflector/failed/{jobId}.json` (req R-ERR); other failures are in the
 * function's logs under the message id.
 *
 * A dry run lists without moving. SQS cannot peek: a FIFO DLQ shows only the first parked
 * message of each group until that one leaves, so a dry run lists the head of each group.
 *
 * In AWS, the console's "Start DLQ redrive" (SQS StartMessageMoveTask) does the move; this
 * does the same with receive / send / delete, so it runs against the emulators too.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { getText } from '../../lib/kernel/s3-objects.adapter.js';
import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { batchFailureKey } from '../../lib/kernel/memory-paths.js';
import type { QueueKey } from '../resources.js';
import type { StackInfo } from './harness.js';

export interface ParkedMessage {
  queue: QueueKey;
  messageId: string;
  receiveCount: number;
  /** What the message is: its event type, user and job or turn id, when its body parses. */
  what: string;
  /** Why it was parked, where the service recorded it. */
  reason: string | null;
  redriven: boolean;
}

async function reasonFor(s3: S3Client, bucket: string, body: Record<string, unknown>): Promise<string | null> {
  if (body.type !== 'reflector.job' || typeof body.userId !== 'string' || typeof body.jobId !== 'string') return null;
  try {
    const log = JSON.parse(await getText(s3, bucket, batchFailureKey(body.userId, body.jobId))) as {
      error?: { message?: string };
    };
    return log.error?.message ?? null;
  } catch {
    return null;
  }
}

function describe(body: Record<string, unknown>): string {
  const parts = [String(body.type ?? 'unparsed')];
  if (typeof body.userId === 'string') parts.push(`user ${body.userId}`);
  if (typeof body.jobId === 'string') parts.push(`job ${body.jobId}`);
  if (typeof body.turnId === 'number') parts.push(`turn ${body.turnId}`);
  return parts.join(' · ');
}

export async function redriveDeadLetters(
  clients: { sqs: SQSClient; s3: S3Client },
  info: Pick<StackInfo, 'queues' | 'bucketName'>,
  options: { dryRun?: boolean; queues?: readonly QueueKey[] } = {},
): Promise<ParkedMessage[]> {
  const out: ParkedMessage[] = [];
  for (const key of options.queues ?? (Object.keys(info.queues) as QueueKey[])) {
    const q = info.queues[key];
    const seen = new Set<string>();
    for (;;) {
      const res = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: q.dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 2,
          // A dry run's receive hides a message for a second only: it is back for the real one.
          VisibilityTimeout: options.dryRun ? 1 : 30,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages: Message[] = (res.Messages ?? []).filter((m) => !seen.has(m.MessageId ?? ''));
      if (messages.length === 0) break;
      for (const m of messages) {
        seen.add(m.MessageId ?? '');
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(m.Body ?? '') as Record<string, unknown>;
        } catch {
          // described as unparsed; redriven as it is
        }
        const parked: ParkedMessage = {
          queue: key,
          messageId: m.MessageId ?? '',
          receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0),
          what: describe(body),
          reason: await reasonFor(clients.s3, info.bucketName, body),
          redriven: false,
        };
        if (!options.dryRun) {
          const group = m.Attributes?.MessageGroupId;
          await clients.sqs.send(
            new SendMessageCommand({
              QueueUrl: q.url,
              MessageBody: m.Body ?? '',
              ...(group ? { MessageGroupId: group, MessageDeduplicationId: `redrive-${m.MessageId}` } : {}),
            }),
          );
          await clients.sqs.send(
            new DeleteMessageCommand({ QueueUrl: q.dlqUrl, ReceiptHandle: m.ReceiptHandle ?? '' }),
          );
          parked.redriven = true;
        }
        out.push(parked);
      }
    }
  }
  return out;
}
