import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryFirst } from '../kernel/dynamo-query.adapter.js';
import type { BatchLog } from './batch-log.js';
import { batchFailureKey, batchLogKey, keys } from '../kernel/memory-paths.js';
import type { BatchLogReader, BatchLogStore } from './batch-log.port.js';
import { itemSize } from '../kernel/dynamo-item-size.adapter.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import { getTextOrNull } from '../kernel/s3-objects.adapter.js';
import { packJson, unpackJson } from '../kernel/packed-json.adapter.js';
import type { Storage } from '../kernel/storage.adapter.js';

/**
 * Largest batch log kept inside its summary item, under DynamoDB's 400 KB item limit
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html) with
 * room for the summary's attributes; a larger one (a long raw answer in `error.raw`) is an S3
 * object under Logs/reflector/ as before.
 */
const MAX_LOG_ITEM_BYTES = 350 * 1024;

/**
 * Batch logs: one DynamoDB item per batch (`keys.batchSk`: `BATCH#{last turn}#{id}`, so the
 * sleep-time runs read a window as a key range), the listing's summary attributes
 * and the whole log: a log of a few KB is a few write units ($0.625 per million
 * each) against an S3 PUT ($5 per million) and a GET for every reader
 * (https://aws.amazon.com/dynamodb/pricing/on-demand/, https://aws.amazon.com/s3/pricing/).
 * The log is packed (`packed`, packed-json.ts: fewer write units than its JSON text, `log`,
 * which older items hold, and as much less for the sleep-time runs' Query of the logs).
 * The item is the batch's commit record: the first write wins. A log too large for an item,
 * and every log of the older layout, is an object in S3 that the item names (`logKey`).
 */
export class DynamoS3BatchLogStore implements BatchLogStore, BatchLogReader {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;

  constructor(storage: Omit<Storage, 'changes'>) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
  }

  async exists(userId: string, batchId: string): Promise<boolean> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.batchSk(batchId) },
        ConsistentRead: true,
        ProjectionExpression: 'pk',
      }),
    );
    return res.Item !== undefined;
  }

  /** Where the log is kept: its item's sort key, or (too large for an item) its S3 key. */
  async write(log: BatchLog): Promise<string> {
    const item = summaryItem(log);
    const withLog = { ...item, packed: packJson(log) };
    if (itemSize(withLog) <= MAX_LOG_ITEM_BYTES) {
      await putOnce(this.ddb, this.tableName, withLog);
      return item.sk;
    }
    const key = batchLogKey(log.user_id, log.batch_id);
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: key,
        Body: JSON.stringify(log, null, 2),
        ContentType: 'application/json',
      }),
    );
    await putOnce(this.ddb, this.tableName, { ...item, logKey: key });
    return key;
  }

  /**
   * The newest `limit` logs by the turns they cover: a descending Query of the key range
   * (`keys.turnKeyed`; logs still under the old keys are moved by the migration) that stops at
   * the page (`queryFirst`), not the user's whole history. It projects the listing's
   * attributes, which keeps the packed logs off the wire and out of the function's memory;
   * the read units are still those of the whole items
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html).
   * Every name is aliased: `status`, `timestamp`, `trigger` and others are reserved words
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ReservedWords.html).
   */
  async list(userId: string, limit: number): Promise<Array<Record<string, unknown>>> {
    const { low, high } = keys.turnKeyed(keys.batchPrefix);
    return queryFirst(
      this.ddb,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
        ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':low': low, ':high': high },
        ProjectionExpression: LISTING_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(LISTING_ATTRIBUTES.map((a, i) => [`#a${i}`, a])),
        ScanIndexForward: false,
      },
      limit,
    );
  }

  async get(userId: string, batchId: string): Promise<BatchLog | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.batchSk(batchId) },
        ConsistentRead: true,
      }),
    );
    return res.Item ? batchLogOf(this.s3, this.bucketName, res.Item) : null;
  }

  async writeFailure(log: BatchLog): Promise<string> {
    const key = batchFailureKey(log.user_id, log.batch_id);
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: key,
        Body: JSON.stringify(log, null, 2),
        ContentType: 'application/json',
      }),
    );
    return key;
  }
}

/** The attributes `list` serves: every one `summaryItem` writes but the keys, and `logKey` (a log kept in S3). */
const LISTING_ATTRIBUTES = [
  'kind',
  'userId',
  'batchId',
  'status',
  'timestamp',
  'inputAt',
  'trigger',
  'turns',
  'itemsProposed',
  'itemsPassed',
  'rejections',
  'staged',
  'promoted',
  'assessment',
  'modelId',
  'batchInference',
  'error',
  'eventOnly',
  'logKey',
] as const;

/** The listing's attributes of a batch (the log's status, counts and times): keep LISTING_ATTRIBUTES in step. */
function summaryItem(log: BatchLog) {
  return {
    pk: keys.userPk(log.user_id),
    sk: keys.batchSk(log.batch_id),
    kind: 'batch-log',
    userId: log.user_id,
    batchId: log.batch_id,
    status: log.status,
    timestamp: log.timestamp,
    ...(log.input_at ? { inputAt: log.input_at } : {}),
    trigger: log.trigger,
    turns: log.turns_reviewed,
    itemsProposed: log.quality_gate_results.items_proposed,
    itemsPassed: log.quality_gate_results.items_passed,
    rejections: log.quality_gate_results.rejections.length,
    staged: log.staged_files.length,
    promoted: log.promoted_files.length,
    ...(log.assessment ? { assessment: log.assessment } : {}),
    // Which model answered, and why a batch aborted, without opening the log:
    // the smoke test (infra/smoke) and the console read them from the listing.
    ...(log.model ? { modelId: log.model.modelId } : {}),
    // Answered by a batch inference job (a routine batch at batch prices: lib/batch-inference/routine-batch.ts).
    ...(log.model?.batchInference ? { batchInference: true } : {}),
    ...(log.error ? { error: log.error.message } : {}),
    // An event's batch with no turn: what it reflected on instead, or why nothing (req R-EVT-1).
    ...(log.event_only ? { eventOnly: log.event_only } : {}),
  };
}

/** A batch's log from its item: inside it, or (too large, or of the older layout) the S3 object it names. */
export async function batchLogOf(
  s3: S3Client,
  bucketName: string,
  item: Record<string, unknown>,
): Promise<BatchLog | null> {
  if (typeof item.packed === 'string') return unpackJson(item.packed) as BatchLog;
  if (typeof item.log === 'string') return JSON.parse(item.log) as BatchLog;
  if (typeof item.logKey !== 'string') return null;
  const text = await getTextOrNull(s3, bucketName, item.logKey);
  return text === null ? null : (JSON.parse(text) as BatchLog);
}
