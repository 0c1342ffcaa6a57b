import { createHash } from 'node:crypto';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type TurnSaved, TurnSavedSchema } from '../../events/turn-saved.js';

export interface RawMessage {
  body: string;
  groupId: string;
  deduplicationId: string;
}

export interface PublishResult {
  sent: number;
  failed: Array<{ index: number; code: string; message: string }>;
}

/** FIFO deduplication id of a turn: SQS drops a republish of the same user's turn within 5 minutes. */
export const turnDeduplicationId = (turn: Pick<TurnSaved, 'userId' | 'turnId'>): string =>
  createHash('sha256').update(`${turn.userId}\n${turn.turnId}`).digest('hex');

/**
 * Publishes turn.saved events to the TurnQueue: validated first (a bad event throws an
 * error naming the field), sent in batches of 10, group = userId so each user's turns
 * stay in order, deduplication id = hash(userId, turnId).
 */
export class TurnPublisher {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(turns: readonly TurnSaved[]): Promise<PublishResult> {
    const bodies = turns.map((t, i) => {
      const parsed = TurnSavedSchema.safeParse(t);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new TypeError(`turn ${i}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
      }
      return { body: JSON.stringify(parsed.data), groupId: parsed.data.userId, deduplicationId: turnDeduplicationId(parsed.data) };
    });
    return this.publishRaw(bodies);
  }

  /** Send bodies as they are (the local replay uses this to deliver malformed lines too). */
  async publishRaw(messages: readonly RawMessage[]): Promise<PublishResult> {
    const result: PublishResult = { sent: 0, failed: [] };
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      const res = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((m, j) => ({ Id: String(i + j), MessageBody: m.body, MessageGroupId: m.groupId, MessageDeduplicationId: m.deduplicationId })),
        }),
      );
      result.sent += res.Successful?.length ?? 0;
      for (const f of res.Failed ?? []) result.failed.push({ index: Number(f.Id), code: f.Code ?? 'Unknown', message: f.Message ?? '' });
    }
    return result;
  }
}
