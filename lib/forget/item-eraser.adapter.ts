/**
 * Hard deletion of single items of one user (req R-DEL-1, R-DEL-3), as the user erasure
 * (user-eraser.ts) deletes a whole user:
 *
 * - DynamoDB: the records by key in BatchWriteItem requests of 25, unprocessed ones retried
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html),
 *   then one change mark for the ids, so the search index drops them (docs/search-index.md).
 * - S3: the bucket is versioned, so a DeleteObject only adds a delete marker. Every version and
 *   delete marker under each prefix is listed (ListObjectVersions, s3:ListBucketVersions:
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html) and deleted
 *   by version id with DeleteObject, which then needs s3:DeleteObjectVersion
 *   (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html, "Permissions").
 *   One DeleteObject per version rather than DeleteObjects: an item has a handful of versions,
 *   and DeleteObjects' request body would grow the api function's bundle past its 1 MB budget.
 */
import { DeleteObjectCommand, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import type { ItemEraser } from './forget.port.js';
import { batchWriteAll } from '../kernel/dynamo-query.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/** Prefixes listed at once. */
const PARALLEL_LISTS = 8;

export class DynamoS3ItemEraser implements ItemEraser {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  private readonly changes: SearchChangeLog;

  constructor(storage: Storage) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
  }

  /** A Query of the user's turn index (keys and session only), filtered by session: it reads the user's turns, billed on every item read. */
  async sessionTurns(userId: string, sessionId: string, limit: number): Promise<number[]> {
    const ids: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
          FilterExpression: 'sessionId = :s',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix, ':s': sessionId },
          ProjectionExpression: 'turnId',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      ids.push(...(res.Items ?? []).map((i) => Number(i.turnId)));
      start = res.LastEvaluatedKey;
    } while (start && ids.length <= limit);
    return ids.sort((a, b) => a - b).slice(0, limit + 1);
  }

  async deleteRecords(userId: string, sortKeys: readonly string[], changedIds: readonly string[]): Promise<void> {
    const pk = keys.userPk(userId);
    await batchWriteAll(
      this.ddb,
      this.tableName,
      [...new Set(sortKeys)].map((sk) => ({ DeleteRequest: { Key: { pk, sk } } })),
    );
    if (changedIds.length > 0) await this.changes.mark(userId, [...new Set(changedIds)]);
  }

  async deleteObjects(prefixes: readonly string[]): Promise<number> {
    let deleted = 0;
    const queue = [...new Set(prefixes)];
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL_LISTS, queue.length) }, async () => {
        for (let prefix = queue.shift(); prefix !== undefined; prefix = queue.shift())
          deleted += await this.deleteVersions(prefix);
      }),
    );
    return deleted;
  }

  private async deleteVersions(prefix: string): Promise<number> {
    let deleted = 0;
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    do {
      const res = await this.s3.send(
        new ListObjectVersionsCommand({
          Bucket: this.bucketName,
          Prefix: prefix,
          KeyMarker: keyMarker,
          VersionIdMarker: versionIdMarker,
        }),
      );
      const versions = [...(res.Versions ?? []), ...(res.DeleteMarkers ?? [])]
        .filter((v) => v.Key !== undefined)
        .map((v) => ({ Key: v.Key as string, VersionId: v.VersionId ?? 'null' }));
      await Promise.all(
        versions.map((v) =>
          this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: v.Key, VersionId: v.VersionId })),
        ),
      );
      deleted += versions.length;
      keyMarker = res.IsTruncated ? res.NextKeyMarker : undefined;
      versionIdMarker = res.IsTruncated ? res.NextVersionIdMarker : undefined;
    } while (keyMarker !== undefined);
    return deleted;
  }
}
