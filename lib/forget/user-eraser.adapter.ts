/**
 * Deletes what a user left behind, a page at a time; every step may run again.
 *
 * - DynamoDB: the user's partition, read a Query page at a time (keys only) and deleted in
 *   BatchWriteItem requests of 25 (its limit), unprocessed ones retried
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html).
 *   The gsi1 entries of those items (activity markers, staged-by-day, runs, costs, tier
 *   expiries) go with them: an index holds projections of table items only.
 * - S3: the bucket is versioned, so deleting a key only adds a delete marker. Every version
 *   and delete marker under the prefix is listed with ListObjectVersions (s3:ListBucketVersions,
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html) and deleted by
 *   version id with DeleteObjects, up to 1,000 keys a request, each key's result reported
 *   (s3:DeleteObject and s3:DeleteObjectVersion,
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html): a deleted
 *   version is gone, not noncurrent.
 */
import {
  type DeleteObjectsCommandOutput,
  DeleteObjectsCommand,
  ListObjectVersionsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { DeleteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { GLOBAL_USER } from '../items/memory-item.js';
import { keys } from '../kernel/memory-paths.js';
import type { UserEraser } from './forget.port.js';
import { batchGetAll, batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/** BatchWriteItem requests in flight at once while a partition is deleted. */
const PARALLEL_WRITES = 4;

type Version = { Key: string; VersionId: string };

export class DynamoS3UserEraser implements UserEraser {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  private readonly changes: SearchChangeLog;

  constructor(
    storage: Storage,
    /** Items per Query page and versions per ListObjectVersions page (absent: the services' own: 1 MB, 1,000). */
    private readonly options: { pageSize?: number } = {},
  ) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
  }

  async memoryItemIds(userId: string): Promise<string[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.memoryPrefix },
      ProjectionExpression: 'sk',
    });
    return items.map((i) => String(i.sk).slice(keys.memoryPrefix.length));
  }

  async deleteGlobalItems(ids: readonly string[]): Promise<number> {
    const global = (id: string) => ({ pk: keys.ownerPk(GLOBAL_USER), sk: keys.memorySk(id) });
    const found = (
      await batchGetAll(this.ddb, this.tableName, ids.map(global), { projection: 'sk', consistent: true })
    ).map((r) => String(r.sk).slice(keys.memoryPrefix.length));
    await batchWriteAll(
      this.ddb,
      this.tableName,
      found.map((id) => ({ DeleteRequest: { Key: global(id) } })),
    );
    // Marked after the delete, so GLOBAL's next compaction drops them from its segments.
    if (found.length > 0) await this.changes.mark(GLOBAL_USER, found);
    return found.length;
  }

  async deleteSignalState(userId: string): Promise<void> {
    await this.ddb.send(
      new DeleteCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.signalSk } }),
    );
  }

  async deleteItems(userId: string, page: (deleted: number) => Promise<void>): Promise<void> {
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId) },
          ProjectionExpression: 'pk, sk',
          ExclusiveStartKey: start,
          Limit: this.options.pageSize,
        }),
      );
      const requests = (res.Items ?? []).map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } }));
      const size = Math.ceil(requests.length / PARALLEL_WRITES / 25) * 25;
      await Promise.all(
        Array.from({ length: PARALLEL_WRITES }, (_, i) =>
          batchWriteAll(this.ddb, this.tableName, requests.slice(i * size, (i + 1) * size)),
        ),
      );
      if (requests.length > 0) await page(requests.length);
      start = res.LastEvaluatedKey;
    } while (start);
  }

  async deleteObjectVersions(prefix: string, page: (deleted: number) => Promise<void>): Promise<void> {
    await this.eachVersionPage(prefix, async (versions) => {
      await this.deleteVersions(versions);
      if (versions.length > 0) await page(versions.length);
    });
  }

  async deleteNoncurrentVersions(prefix: string): Promise<number> {
    let deleted = 0;
    await this.eachVersionPage(prefix, async (versions, latest) => {
      const old = versions.filter((v) => !latest.has(`${v.Key}\u0000${v.VersionId}`));
      await this.deleteVersions(old);
      deleted += old.length;
    });
    return deleted;
  }

  /** Each page of versions and delete markers under `prefix`, with the versions that are current objects. */
  private async eachVersionPage(
    prefix: string,
    visit: (versions: Version[], latest: Set<string>) => Promise<void>,
  ): Promise<void> {
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    do {
      const res = await this.s3.send(
        new ListObjectVersionsCommand({
          Bucket: this.bucketName,
          Prefix: prefix,
          KeyMarker: keyMarker,
          VersionIdMarker: versionIdMarker,
          MaxKeys: this.options.pageSize,
        }),
      );
      const all = [...(res.Versions ?? []), ...(res.DeleteMarkers ?? [])].filter((v) => v.Key !== undefined);
      const versions = all.map((v) => ({ Key: v.Key as string, VersionId: v.VersionId ?? 'null' }));
      // A current delete marker is not a current object: only current versions are kept by deleteNoncurrentVersions.
      const latest = new Set(
        (res.Versions ?? []).filter((v) => v.IsLatest).map((v) => `${v.Key}\u0000${v.VersionId ?? 'null'}`),
      );
      await visit(versions, latest);
      keyMarker = res.IsTruncated ? res.NextKeyMarker : undefined;
      versionIdMarker = res.IsTruncated ? res.NextVersionIdMarker : undefined;
    } while (keyMarker !== undefined);
  }

  private async deleteVersions(versions: readonly Version[]): Promise<void> {
    for (let i = 0; i < versions.length; i += 1000) {
      const res: DeleteObjectsCommandOutput = await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucketName,
          Delete: { Objects: versions.slice(i, i + 1000), Quiet: true },
        }),
      );
      const failed = res.Errors ?? [];
      if (failed.length > 0)
        throw new Error(
          `${failed.length} object versions not deleted (first: ${failed[0]?.Code} ${failed[0]?.Message}): the forget is retried`,
        );
    }
  }
}
