import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './dynamo-query.js';
import type { BatchLog } from '../domain/batch-log.js';
import { batchFailureKey, batchLogKey, keys } from '../domain/memory-paths.js';
import type { BatchLogReader, BatchLogStore } from '../ports.js';
import { putOnce } from './dynamo-put-once.js';
import { getTextOrNull } from './s3-objects.js';

/** Batch logs as JSON in S3, plus a summary item per batch in DynamoDB for listing. */
export class S3DynamoBatchLogStore implements BatchLogStore, BatchLogReader {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly s3: S3Client,
    private readonly tableName: string,
    private readonly bucketName: string,
  ) {}

  async exists(userId: string, batchId: string): Promise<boolean> {
    const res = await this.ddb.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.batchSk(batchId) }, ConsistentRead: true, ProjectionExpression: 'pk' }),
    );
    return res.Item !== undefined;
  }

  async write(log: BatchLog): Promise<string> {
    const key = batchLogKey(log.user_id, log.batch_id);
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucketName, Key: key, Body: JSON.stringify(log, null, 2), ContentType: 'application/json' }));
    // The summary item is the batch's commit marker: the first write wins.
    await putOnce(this.ddb, this.tableName, {
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
            // Which model answered, and why a batch aborted, without opening the log in S3:
            // the smoke test (infra/smoke) and the console read them from the listing.
            ...(log.model ? { modelId: log.model.modelId } : {}),
            ...(log.error ? { error: log.error.message } : {}),
            logKey: key,
          });
    return key;
  }

  async list(userId: string, limit: number): Promise<Array<Record<string, unknown>>> {
    // Batch ids name turn ranges (`batch-12-18`), not times: sort the summaries by timestamp.
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.batchPrefix },
    });
    return items
      .map(({ pk, sk, ...rest }) => rest)
      .sort((a, b) => String(b.timestamp).localeCompare(String(a.timestamp)))
      .slice(0, limit);
  }

  async get(userId: string, batchId: string): Promise<BatchLog | null> {
    const text = await getTextOrNull(this.s3, this.bucketName, batchLogKey(userId, batchId));
    return text === null ? null : (JSON.parse(text) as BatchLog | null);
  }

  async writeFailure(log: BatchLog): Promise<string> {
    const key = batchFailureKey(log.user_id, log.batch_id);
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucketName, Key: key, Body: JSON.stringify(log, null, 2), ContentType: 'application/json' }));
    return key;
  }
}
