import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { AgentEventSchema } from '../../events/agent-event.js';
import { SessionClosedSchema } from '../../events/session-closed.js';
import { CLAIM_CHECK_THRESHOLD_BYTES, type TurnClaimCheck } from '../../events/turn-claim-check.js';
import { type TurnSaved, TurnSavedSchema } from '../../events/turn-saved.js';
import type { AgentEvent, SessionClosed } from '../../events/index.js';
import { claimKey } from '../kernel/memory-paths.js';
import { type RedactionPolicy, redactFields } from './redaction.js';
import type { AgentEventPublisher } from './turn.port.js';

export interface RawMessage {
  body: string;
  groupId: string;
  deduplicationId: string;
}

export interface PublishResult {
  sent: number;
  /** Messages of the batch SQS refused (index into the published list). */
  failed: Array<{ index: number; code: string; message: string }>;
  /** How many turns travelled as claim checks. */
  claimChecks: number;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** SQS refuses a SendMessageBatch whose bodies add up to more than 1 MiB (and any message over 1 MiB). */
export const MAX_BATCH_BYTES = 1024 * 1024;

/**
 * JSON text that any SQS accepts: characters outside U+0020–U+D7FF / U+E000–U+FFFD (emoji
 * and other astral characters, U+FFFE/U+FFFF) are written as JSON \\u escapes, which
 * parse back to the very same string. (SQS's own set includes the astral planes; some
 * emulators reject them, and escaping costs a few bytes per emoji.)
 */
export function sqsSafeJson(text: string): string {
  return text.replace(/[\u{10000}-\u{10FFFF}\uFFFE\uFFFF]/gu, (ch) =>
    Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** FIFO deduplication id of a turn: SQS drops a republish of the same user's turn within 5 minutes. */
export const turnDeduplicationId = (turn: Pick<TurnSaved, 'userId' | 'turnId'>): string =>
  sha(`${turn.userId}\n${turn.turnId}`);

export interface ClaimCheckOptions {
  s3: S3Client;
  /** The memory bucket (claims go under `claims/{userId}/`). */
  bucketName: string;
  /** Events whose JSON is larger than this travel as claim checks. @default 256 KiB */
  thresholdBytes?: number;
}

type Publishable = TurnSaved | SessionClosed | AgentEvent;

/**
 * Publishes to the TurnQueue: each event validated first (a bad one throws an error
 * naming the field), sent in batches of up to 10 (and 1 MiB), group = userId so each user's events stay in
 * order. Turns: deduplication id = hash(userId, turnId); a turn larger than the threshold
 * is written to S3 and sent as a claim check (needs `claimCheck`). Secrets in an event's
 * free text are redacted before it is sent or written (lib/turns/redaction.ts); the signal
 * function redacts again, for publishers that are not this one.
 */
export class SqsTurnPublisher {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly claimCheck?: ClaimCheckOptions,
    /** Secrets are redacted before an event leaves the agent; personal identifiers too when asked. */
    private readonly redaction: RedactionPolicy = { personalData: false },
  ) {}

  async publish(events: readonly Publishable[]): Promise<PublishResult> {
    let claimChecks = 0;
    const messages = await Promise.all(
      events.map(async (event, i): Promise<RawMessage> => {
        const validated = redactFields(validate(event, i), this.redaction).value;
        const body = sqsSafeJson(JSON.stringify(validated));
        if (validated.type !== 'turn.saved') {
          return { body, groupId: validated.userId, deduplicationId: sha(body) };
        }
        const deduplicationId = turnDeduplicationId(validated);
        const threshold = this.claimCheck?.thresholdBytes ?? CLAIM_CHECK_THRESHOLD_BYTES;
        const bytes = Buffer.byteLength(body, 'utf8');
        if (bytes <= threshold) return { body, groupId: validated.userId, deduplicationId };
        if (!this.claimCheck) {
          throw new RangeError(
            `event ${i}: turn ${validated.turnId} is ${bytes} bytes, over ${threshold}; give the publisher a claimCheck bucket`,
          );
        }
        const key = claimKey(validated.userId, validated.turnId, sha(body).slice(0, 16));
        await this.claimCheck.s3.send(
          new PutObjectCommand({
            Bucket: this.claimCheck.bucketName,
            Key: key,
            Body: body,
            ContentType: 'application/json',
          }),
        );
        claimChecks += 1;
        const claim: TurnClaimCheck = {
          type: 'turn.saved',
          version: 1,
          userId: validated.userId,
          sessionId: validated.sessionId,
          turnId: validated.turnId,
          timestamp: validated.timestamp,
          payloadRef: { key, bytes },
        };
        return { body: sqsSafeJson(JSON.stringify(claim)), groupId: validated.userId, deduplicationId };
      }),
    );
    return { ...(await this.publishRaw(messages)), claimChecks };
  }

  /**
   * Send bodies as they are (the local replay uses this to deliver malformed lines too), in
   * batches of at most 10 messages and MAX_BATCH_BYTES: ten turns just under the claim-check
   * threshold would otherwise make SQS refuse the whole request. A body SQS could never take
   * is reported as failed, not sent.
   */
  async publishRaw(messages: readonly RawMessage[]): Promise<PublishResult> {
    const result: PublishResult = { sent: 0, failed: [], claimChecks: 0 };
    let start = 0;
    while (start < messages.length) {
      let end = start;
      let bytes = 0;
      while (end < messages.length && end - start < 10) {
        const size = Buffer.byteLength(messages[end]?.body ?? '', 'utf8');
        if (end > start && bytes + size > MAX_BATCH_BYTES) break;
        bytes += size;
        end += 1;
      }
      if (bytes > MAX_BATCH_BYTES) {
        result.failed.push({
          index: start,
          code: 'MessageTooLong',
          message: `${bytes} bytes, over the ${MAX_BATCH_BYTES} SQS accepts`,
        });
        start = end;
        continue;
      }
      const chunk = messages.slice(start, end);
      const res = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((m, j) => ({
            Id: String(start + j),
            MessageBody: m.body,
            MessageGroupId: m.groupId,
            MessageDeduplicationId: m.deduplicationId,
          })),
        }),
      );
      result.sent += res.Successful?.length ?? 0;
      for (const f of res.Failed ?? [])
        result.failed.push({ index: Number(f.Id), code: f.Code ?? 'Unknown', message: f.Message ?? '' });
      start = end;
    }
    return result;
  }
}

function validate(event: Publishable, index: number): Publishable {
  const schema =
    event.type === 'session.closed'
      ? SessionClosedSchema
      : event.type === 'agent.event'
        ? AgentEventSchema
        : TurnSavedSchema;
  const parsed = schema.safeParse(event);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`event ${index}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
}

/** The AgentEventPublisher port on the TurnQueue: a refused message is an error, so the caller's request fails and can be retried. */
export class SqsAgentEventPublisher implements AgentEventPublisher {
  private readonly publisher: SqsTurnPublisher;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.publisher = new SqsTurnPublisher(sqs, queueUrl);
  }

  async publish(events: readonly AgentEvent[]): Promise<void> {
    const result = await this.publisher.publish(events);
    if (result.failed.length > 0)
      throw new Error(
        `the TurnQueue refused ${result.failed.length} event(s): ${result.failed.map((f) => `${f.code} ${f.message}`).join('; ')}`,
      );
  }
}
