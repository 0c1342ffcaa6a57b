/**
 * A batch's recorded model answer (docs/design.md, "Idempotency, faults, determinism"): kept so a redelivered job reuses
 * the answer instead of asking the model again.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys, modelOutputKey } from '../kernel/memory-paths.js';
import { itemSize } from '../kernel/dynamo-item-size.adapter.js';
import { getTextOrNull } from '../kernel/s3-objects.adapter.js';
import { packJson, unpackJson } from '../kernel/packed-json.adapter.js';
import type { StorageBucket, StorageTable } from '../kernel/storage.adapter.js';
import type { ModelResponse } from './language-model.port.js';

/**
 * Largest recorded model answer kept as an item: under DynamoDB's 400 KB item limit
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html) with room to spare.
 */
const MAX_MODEL_OUTPUT_ITEM_BYTES = 350 * 1024;

/**
 * How long a recorded model answer is kept: past the longest a job can wait for a redelivery —
 * the job queue's retention (SQS's default, 4 days), then the dead-letter queue's 14 days,
 * which a FIFO queue's message starts anew when it is moved there
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html).
 * A job redriven later than this asks the model again.
 */
const MODEL_OUTPUT_TTL_MS = 30 * 86_400_000;

export class DynamoS3ModelOutputStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;

  constructor(storage: StorageTable & StorageBucket) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
  }

  /**
   * The recorded answer: an item in the user's partition (a few KB: a write unit per KB at
   * $0.625 per million against an S3 PUT's $5), packed (`packed`, packed-json.ts:
   * fewer write units than the JSON text, `response`, which older items hold). Strongly consistent, so a redelivery right after the put
   * sees it. An answer too large for an item is an S3 object the item names (`key`); S3 is read
   * only then, so a job's first delivery, which finds no item, makes no GET (S3 bills a 404
   * like any GET: https://docs.aws.amazon.com/AmazonS3/latest/userguide/ErrorCodeBilling.html).
   */
  async get(userId: string, batchId: string): Promise<ModelResponse | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.modelOutputSk(batchId) },
        ConsistentRead: true,
      }),
    );
    if (typeof res.Item?.packed === 'string') return unpackJson(res.Item.packed) as ModelResponse;
    if (typeof res.Item?.response === 'string') return JSON.parse(res.Item.response) as ModelResponse;
    if (typeof res.Item?.key !== 'string') return null;
    const text = await getTextOrNull(this.s3, this.bucketName, res.Item.key);
    return text ? (JSON.parse(text) as ModelResponse) : null;
  }

  /**
   * Kept only for the job's redeliveries (once its commit record is written nothing reads it),
   * so the item carries the table's TTL attribute, MODEL_OUTPUT_TTL_MS after the write by the
   * wall clock DynamoDB's TTL reads, and DynamoDB deletes it at no cost
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html). The S3
   * object of an oversized answer has no such expiry (rare; erased with the user).
   */
  async put(userId: string, batchId: string, response: ModelResponse): Promise<void> {
    const item = {
      pk: keys.userPk(userId),
      sk: keys.modelOutputSk(batchId),
      kind: 'model-output',
      userId,
      jobId: batchId,
      packed: packJson(response),
      expiresAt: Math.floor((Date.now() + MODEL_OUTPUT_TTL_MS) / 1000),
    };
    // An answer too large for an item (DynamoDB's 400 KB limit: a runaway or hostile model) is an S3 object, named by the item.
    if (itemSize(item) > MAX_MODEL_OUTPUT_ITEM_BYTES) {
      const key = modelOutputKey(userId, batchId);
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucketName,
          Key: key,
          Body: JSON.stringify(response),
          ContentType: 'application/json',
        }),
      );
      const { packed: _, expiresAt: __, ...pointer } = item;
      await this.ddb.send(new PutCommand({ TableName: this.tableName, Item: { ...pointer, key } }));
      return;
    }
    await this.ddb.send(new PutCommand({ TableName: this.tableName, Item: item }));
  }
}
