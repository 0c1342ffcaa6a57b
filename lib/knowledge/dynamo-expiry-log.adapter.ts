import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import type { ExpiryLog } from './knowledge.port.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/**
 * Each expiry sweep's deletions for a user, with reasons (req R-PRO-3): one item a day in the
 * user's partition (`EXPIRYLOG#{day}`), a sweep of the same day writing it again whole. An
 * item, not an S3 object: a log of a few hundred bytes is one write unit
 * ($0.625 per million) against a PUT ($5 per million)
 * (https://aws.amazon.com/dynamodb/pricing/on-demand/, https://aws.amazon.com/s3/pricing/);
 * a user's export and forget take it with the rest of their partition.
 */
export class DynamoExpiryLog implements ExpiryLog {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async write(userId: string, sweptAt: string, deletions: Parameters<ExpiryLog['write']>[2]): Promise<void> {
    await this.ddb.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: keys.userPk(userId),
          sk: keys.expiryLogSk(sweptAt.slice(0, 10)),
          kind: 'expiry-log',
          userId,
          sweptAt,
          deletions,
        },
      }),
    );
  }
}
